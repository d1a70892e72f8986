// Vigil console behaviour: local times, HTMX error display, copy buttons and the few form helpers the pages
// need. No framework, no build step, and no inline scripts or handlers anywhere in the templates: the
// Content-Security-Policy allows only this file and htmx (script-src 'self'), so pages opt in to a behaviour
// with data attributes and this file wires them up by event delegation.
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

  // <div data-replace-url="/path"> on a page that answers a form post (a key or password shown once): make the
  // history entry that path, so reloading or coming back shows it instead of re-posting the form.
  function replaceHistory(root) {
    const marker = root.querySelector("[data-replace-url]");
    const target = marker && marker.dataset.replaceUrl;
    if (target && target.charAt(0) === "/" && target.charAt(1) !== "/") history.replaceState(null, "", target);
  }

  // User forms: dim the organization list while "admin" is chosen (the server ignores it for admins anyway).
  function syncRoleOrganizations(form) {
    const orgs = form.querySelector("[data-orgs-for-role]");
    if (!orgs) return;
    const role = form.querySelector('input[name="role"]:checked');
    orgs.classList.toggle("admin-dimmed", !!role && role.value === "admin");
  }

  // Connection form: show only the fields of the chosen authentication method (the server decides what is
  // required either way).
  function syncAuthMethods(form) {
    if (!form.querySelector("[data-auth-choice]")) return;
    const chosen = form.querySelector("input[data-auth-choice]:checked");
    form.querySelectorAll("[data-auth-methods]").forEach(function (box) {
      const show = !chosen || box.dataset.authMethods.split(" ").indexOf(chosen.value) >= 0;
      box.hidden = !show;
      box.querySelectorAll("input, select, textarea").forEach(function (input) { input.disabled = !show; });
    });
  }

  // Alerts filters: the browser's time zone for custom ranges, and the custom fields only when they apply.
  function initAlertFilters(form) {
    const tz = form.elements.tz;
    if (tz && !tz.value) {
      try { tz.value = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (error) { tz.value = ""; }
    }
    toggleCustomRange(form);
  }

  function toggleCustomRange(form) {
    const range = form.elements.range;
    form.querySelectorAll(".custom-range").forEach(function (el) { el.hidden = range.value !== "custom"; });
  }

  // Leave empty and unused filter fields out of the URL so shared links stay short and readable.
  function trimAlertFilters(form) {
    const range = form.elements.range;
    Array.prototype.forEach.call(form.elements, function (el) {
      const unused = range.value !== "custom" && (el.name === "after" || el.name === "before" || el.name === "tz");
      if (el.name && (!el.value || unused || (el.name === "limit" && el.value === "50"))) el.disabled = true;
    });
  }

  function init(root) {
    localizeTimes(root);
    replaceHistory(root);
    root.querySelectorAll("form").forEach(function (form) {
      syncRoleOrganizations(form);
      syncAuthMethods(form);
    });
    root.querySelectorAll("form[data-alert-filters]").forEach(initAlertFilters);
  }

  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:afterSettle", function (event) { localizeTimes(event.target); });
  document.addEventListener("htmx:responseError", function (event) {
    const xhr = event.detail.xhr;
    const text = (xhr.responseText || "").replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim();
    toast(text || ("Request failed (" + xhr.status + ")."));
  });
  document.addEventListener("htmx:sendError", function () { toast("Vigil cannot be reached; retrying on the next update."); });

  document.addEventListener("change", function (event) {
    const input = event.target;
    const form = input.form;
    if (!form) return;
    // <select data-autosubmit>: a filter that applies as soon as it is chosen.
    if (input.matches("[data-autosubmit]")) form.requestSubmit();
    // <input data-chooses="selector">: ticking it also selects that choice in the same form (ticking an
    // organization on the API-key form means "only these").
    if (input.dataset.chooses && input.checked) {
      const choice = form.querySelector(input.dataset.chooses);
      if (choice) choice.checked = true;
    }
    if (input.name === "role") syncRoleOrganizations(form);
    if (input.matches("[data-auth-choice]")) syncAuthMethods(form);
    if (input.name === "range" && form.matches("[data-alert-filters]")) toggleCustomRange(form);
  });

  document.addEventListener("submit", function (event) {
    if (event.target.matches("form[data-alert-filters]")) trimAlertFilters(event.target);
  });

  // Coming back to the Alerts page from the history: the fields trimmed on submit are usable again.
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form[data-alert-filters]").forEach(function (form) {
      Array.prototype.forEach.call(form.elements, function (el) { el.disabled = false; });
    });
  });

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
