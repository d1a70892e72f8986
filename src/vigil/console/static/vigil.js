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

// ---- triage queue (C1): new alerts arriving in an open Alerts page, the selected row, saved filters ----
(function () {
  "use strict";
  let selectedId = null;

  // New alerts land in <tbody id="queue-incoming">. Hidden (any order but newest first, or a later page): a
  // bar counts them and "Show" reveals them, so nothing moves under the analyst. Rows are inserted above the
  // viewport, and the browser's scroll anchoring keeps what the analyst is looking at in place.
  function syncNewAlerts() {
    const incoming = document.getElementById("queue-incoming");
    const bar = document.getElementById("queue-newbar");
    if (!incoming || !bar) return;
    const count = incoming.rows.length;
    bar.hidden = !incoming.hidden || count === 0;
    bar.querySelector("[data-queue-count]").textContent =
      count + (count === 1 ? " new alert" : " new alerts") + " since this page opened";
  }

  // The selected row survives live refreshes, which replace a row's element when its status changes.
  function markSelection() {
    document.querySelectorAll("table[data-queue] tr.is-selected").forEach(function (tr) {
      if (tr.id !== selectedId) tr.classList.remove("is-selected");
    });
    const row = selectedId && document.getElementById(selectedId);
    if (row) row.classList.add("is-selected");
  }

  function savedKey(box) { return "vigil.alerts.savedFilters." + box.dataset.user; }

  function readSaved(box) {
    try {
      const value = JSON.parse(localStorage.getItem(savedKey(box)) || "{}");
      return value && typeof value === "object" && !Array.isArray(value) ? value : {};
    } catch (error) { return {}; }
  }

  function renderSaved(box) {
    const select = box.querySelector("[data-saved-filter-select]");
    const saved = readSaved(box);
    while (select.options.length > 1) select.remove(1);
    Object.keys(saved).sort().forEach(function (name) { select.add(new Option(name, name)); });
    const current = currentView();
    Object.keys(saved).forEach(function (name) { if (saved[name] === current) select.value = name; });
  }

  // The view worth saving: the URL's filters, order and page size, not its position in the pages.
  function currentView() {
    const params = new URLSearchParams(location.search);
    ["cursor", "newer", "page"].forEach(function (name) { params.delete(name); });
    return params.toString();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-saved-filters]").forEach(renderSaved);
    syncNewAlerts();
  });
  document.addEventListener("htmx:afterSettle", function () { syncNewAlerts(); markSelection(); });

  // Rows inserted above the viewport would push what the analyst reads down: note where the selected row (or
  // the first row in view) is before a poll's swap, and scroll by however far it moved.
  let anchor = null;
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (!event.detail.elt || event.detail.elt.id !== "alerts-live") return;
    const rows = document.querySelectorAll("table[data-queue] tbody tr[data-alert-id]");
    let row = selectedId && document.getElementById(selectedId);
    for (let i = 0; !row && i < rows.length; i++) if (rows[i].getBoundingClientRect().top >= 0) row = rows[i];
    anchor = row ? { id: row.id, top: row.getBoundingClientRect().top } : null;
  });
  document.addEventListener("htmx:oobAfterSwap", function (event) {
    if (!anchor || !event.detail.target || event.detail.target.id !== "queue-incoming") return;
    const row = document.getElementById(anchor.id);
    if (row && window.scrollY > 0) window.scrollBy(0, row.getBoundingClientRect().top - anchor.top);
    anchor = null;
  });

  document.addEventListener("click", function (event) {
    const target = event.target;
    if (target.closest("[data-queue-show]")) {
      document.getElementById("queue-incoming").hidden = false;
      syncNewAlerts();
      return;
    }
    const box = target.closest("[data-saved-filters]");
    if (box && target.closest("[data-saved-filter-save]")) {
      const input = box.querySelector("[data-saved-filter-name]");
      const name = input.value.trim();
      if (!name) { input.focus(); return; }
      const saved = readSaved(box);
      saved[name] = currentView();
      localStorage.setItem(savedKey(box), JSON.stringify(saved));
      input.value = "";
      renderSaved(box);
      return;
    }
    if (box && target.closest("[data-saved-filter-delete]")) {
      const select = box.querySelector("[data-saved-filter-select]");
      const saved = readSaved(box);
      delete saved[select.value];
      localStorage.setItem(savedKey(box), JSON.stringify(saved));
      renderSaved(box);
      return;
    }
    const row = target.closest("table[data-queue] tbody tr[data-alert-id]");
    if (!row || target.closest("a, button, summary, details[open]")) return;
    selectedId = selectedId === row.id ? null : row.id;
    markSelection();
  });

  document.addEventListener("change", function (event) {
    const select = event.target.closest("[data-saved-filter-select]");
    if (!select || !select.value) return;
    const saved = readSaved(select.closest("[data-saved-filters]"));
    if (Object.prototype.hasOwnProperty.call(saved, select.value)) {
      const query = saved[select.value];
      location.assign("/alerts" + (query ? "?" + query : ""));
    }
  });
})();

// ---- case lifecycle (C3): choosing Closed reveals the disposition and closing note the server requires ----
(function () {
  "use strict";

  function sync(form) {
    const status = form.querySelector("[data-lifecycle-status]");
    const closing = form.querySelector("[data-lifecycle-closing]");
    const submit = form.querySelector("[data-lifecycle-submit]");
    if (!status || !closing) return;
    const closingChosen = status.value === "closed";
    closing.hidden = !closingChosen;
    if (submit) submit.textContent = closingChosen ? "Close case" : "Update status";
  }

  document.addEventListener("change", function (event) {
    const form = event.target.closest("form[data-lifecycle]");
    if (form && event.target.matches("[data-lifecycle-status]")) sync(form);
  });
  document.querySelectorAll("form[data-lifecycle]").forEach(sync);
})();
