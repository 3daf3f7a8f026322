"use strict";
// The desk has several forms (the intro and order, each entry's texts, the candidates, the
// workflow); a save posts only its own form, so this keeps every other form's unsaved edits
// across the reload, puts them back and says so, and warns before leaving with any unsaved.
// The admin loads this in the head: it starts once the page is parsed.
document.addEventListener("DOMContentLoaded", function () {
  const desk = document.querySelector("[data-desk-daily]");
  if (!desk) {
    return;
  }
  const storageKey = "desk-unsaved:" + desk.dataset.deskDaily;
  const SKIPPED_TYPES = ["hidden", "submit", "button", "file", "password", "reset", "image"];
  let submitting = false;

  function formKey(form) {
    return form.id || "";
  }

  // Text-like fields and boxes an editor types or ticks; selects (the admin's autocomplete)
  // are left to the form they belong to.
  function fields(form) {
    return Array.from(form.elements).filter(function (el) {
      if (!el.name || el.disabled) {
        return false;
      }
      if (el.tagName === "TEXTAREA") {
        return true;
      }
      return el.tagName === "INPUT" && SKIPPED_TYPES.indexOf(el.type) === -1;
    });
  }

  function isBox(el) {
    return el.type === "checkbox" || el.type === "radio";
  }

  function isDirty(el) {
    return isBox(el) ? el.checked !== el.defaultChecked : el.value !== el.defaultValue;
  }

  function label(form, el) {
    let text = el.labels && el.labels.length ? el.labels[0].textContent : el.name;
    text = text.replace(/\s+/g, " ").trim();
    const where = form.dataset.deskLabel;
    return where ? where + " — " + text : text;
  }

  function unsaved(except) {
    const kept = [];
    document.querySelectorAll("form").forEach(function (form) {
      // Ticks of what was read are no edit: a reload may drop them without a warning.
      if (form === except || !formKey(form) || form.hasAttribute("data-desk-untracked")) {
        return;
      }
      fields(form).forEach(function (el) {
        if (isDirty(el)) {
          kept.push({
            form: formKey(form),
            name: el.name,
            label: label(form, el),
            box: isBox(el),
            original: isBox(el) ? el.defaultChecked : el.defaultValue,
            value: isBox(el) ? el.checked : el.value,
          });
        }
      });
    });
    return kept;
  }

  function field(item) {
    const form = document.getElementById(item.form);
    if (!form || form.tagName !== "FORM") {
      return null;
    }
    const el = form.elements.namedItem(item.name);
    return el && el.tagName ? el : null;
  }

  function restore() {
    let kept;
    try {
      kept = JSON.parse(sessionStorage.getItem(storageKey) || "[]");
    } catch (error) {
      kept = [];
    }
    sessionStorage.removeItem(storageKey);
    const notice = document.getElementById("desk-unsaved");
    if (!kept.length || !notice) {
      return;
    }
    const list = document.createElement("ul");
    kept.forEach(function (item) {
      const el = field(item);
      const li = document.createElement("li");
      const current = el ? (item.box ? el.defaultChecked : el.defaultValue) : null;
      if (el && current === item.original) {
        if (item.box) {
          el.checked = item.value;
        } else {
          el.value = item.value;
        }
        el.classList.add("desk-unsaved-field");
        if (!el.id) {
          el.id = "desk-unsaved-" + item.form + "-" + item.name;
        }
        const link = document.createElement("a");
        link.href = "#" + el.id;
        link.textContent = item.label;
        li.appendChild(link);
      } else {
        li.textContent = item.label + " — " + notice.dataset.conflict;
        const text = document.createElement("pre");
        text.textContent = String(item.value);
        li.appendChild(text);
      }
      list.appendChild(li);
    });
    const intro = document.createElement("p");
    intro.textContent = notice.dataset.intro;
    const hint = document.createElement("p");
    hint.textContent = notice.dataset.hint;
    notice.replaceChildren(intro, list, hint);
    notice.hidden = false;
  }

  document.addEventListener(
    "submit",
    function (event) {
      const kept = unsaved(event.target);
      if (kept.length) {
        sessionStorage.setItem(storageKey, JSON.stringify(kept));
      } else {
        sessionStorage.removeItem(storageKey);
      }
      submitting = true;
    },
    true,
  );

  window.addEventListener("beforeunload", function (event) {
    if (!submitting && unsaved(null).length) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  restore();
});
