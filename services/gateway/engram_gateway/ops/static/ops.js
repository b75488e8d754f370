// The dashboard's little bit of behaviour: expand span attributes, confirm bulk replays,
// optional auto-refresh. No data is fetched here; every page is rendered by the gateway.
(function () {
  "use strict";
  document.querySelectorAll(".span-row").forEach(function (row) {
    row.addEventListener("click", function () {
      var attrs = row.querySelector(".attrs");
      if (attrs) { attrs.hidden = !attrs.hidden; }
    });
  });
  document.querySelectorAll("form.confirm").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.dataset.confirm || "Are you sure?")) { event.preventDefault(); }
    });
  });
  var refresh = document.getElementById("auto-refresh");
  if (refresh) {
    refresh.checked = window.localStorage.getItem("engram-ops-refresh") === "1";
    var timer = null;
    var arm = function () {
      if (timer) { window.clearTimeout(timer); timer = null; }
      if (refresh.checked) { timer = window.setTimeout(function () { window.location.reload(); }, 10000); }
    };
    refresh.addEventListener("change", function () {
      window.localStorage.setItem("engram-ops-refresh", refresh.checked ? "1" : "0");
      arm();
    });
    arm();
  }
})();
