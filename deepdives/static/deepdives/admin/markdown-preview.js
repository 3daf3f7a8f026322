// Live preview of the deep dives' Markdown bodies in the admin: each body textarea gets a
// panel beside it, filled with the HTML the server renders through the page's sanitiser.
(function () {
  "use strict";
  function setup() {
    var form = document.getElementById("deepdive_form");
    if (!form) return;
    var token = form.querySelector("input[name=csrfmiddlewaretoken]");
    var base = window.location.pathname.split("/deepdives/deepdive/")[0];
    var endpoint = base + "/deepdives/deepdive/markdown-preview/";
    ["id_body_en", "id_body_zh"].forEach(function (id) {
      var area = document.getElementById(id);
      if (!area) return;
      var panel = document.createElement("div");
      panel.className = "markdown-preview";
      panel.setAttribute("aria-live", "polite");
      panel.id = id + "_preview";
      area.insertAdjacentElement("afterend", panel);
      var timer = null;
      function render() {
        var body = new URLSearchParams();
        body.set("text", area.value);
        fetch(endpoint, {
          method: "POST",
          headers: { "X-CSRFToken": token ? token.value : "" },
          body: body,
          credentials: "same-origin",
        })
          .then(function (r) { return r.json(); })
          .then(function (data) {
            if (data.error) { panel.textContent = data.error; return; }
            // Sanitised by the server (nh3, the page's own allow-list).
            panel.innerHTML = data.html;
          })
          .catch(function () { panel.textContent = "Preview unavailable."; });
      }
      area.addEventListener("input", function () {
        clearTimeout(timer);
        timer = setTimeout(render, 300);
      });
      render();
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
