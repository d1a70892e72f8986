// Vigil console behaviour: local times, HTMX error display, copy buttons. No framework, no build step.
(function () {
  "use strict";
  const dateTime = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit",
  });

  // Times arrive as UTC <time data-epoch>; show them in the browser's time zone.
  function localizeTimes(root) {
    root.querySelectorAll("time[data-epoch]").forEach(function (el) {
      const moment = new Date(Number(el.dataset.epoch) * 1000);
      el.textContent = dateTime.format(moment);
      el.title = moment.toISOString();
    });
  }

  function toast(message) {
    const box = document.getElementById("toast");
    if (!box) return;
    box.textContent = message;
    box.hidden = false;
    clearTimeout(box._timer);
    box._timer = setTimeout(function () { box.hidden = true; }, 6000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    localizeTimes(document);
    if (window.htmx) {
      // Validation answers (422) carry a fragment to show in place; other errors become a toast.
      htmx.config.responseHandling = [
        { code: "204", swap: false },
        { code: "[23]..", swap: true },
        { code: "422", swap: true },
        { code: "[45]..", swap: false, error: true },
      ];
    }
  });
  document.addEventListener("htmx:afterSettle", function (event) { localizeTimes(event.target); });
  document.addEventListener("htmx:responseError", function (event) {
    const xhr = event.detail.xhr;
    const text = (xhr.responseText || "").replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim();
    toast(text || ("Request failed (" + xhr.status + ")."));
  });
  document.addEventListener("htmx:sendError", function () { toast("Vigil cannot be reached; retrying on the next update."); });

  // <button data-copy="#selector"> copies that element's text (API keys, URLs, manifests).
  document.addEventListener("click", function (event) {
    const button = event.target.closest("[data-copy]");
    if (!button) return;
    const source = document.querySelector(button.dataset.copy);
    if (!source) return;
    const text = source.value !== undefined ? source.value : source.textContent;
    navigator.clipboard.writeText(text).then(function () {
      const label = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = label; }, 1500);
    }, function () { toast("Copy failed; select the text and copy it by hand."); });
  });
})();
