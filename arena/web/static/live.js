// Live pages (tournament, ladder, leaderboard): follow the event stream named on
// <body data-live-events> and, when a result arrives, fetch the page again and swap in its
// regions marked data-live (matched by id). The server renders everything; this file only
// moves what it rendered, as nodes (never through innerHTML). Once the fresh page names no
// stream (the tournament is over), the stream is closed. Without JavaScript the server's
// page stands and a live page reloads itself (<noscript> refresh).
(function () {
  "use strict";

  var url = document.body.getAttribute("data-live-events");
  if (!url || !window.EventSource || !window.fetch || !window.DOMParser) return;

  // What changes a page: a match starting or ending, a bracket, standings or ratings moving.
  var EVENTS = [
    "match.started", "match.finished", "bracket", "standings", "rating.changed",
    "tournament.started", "tournament.round_started", "tournament.finished", "tournament.cancelled"
  ];
  var DELAY_MS = 250;  // a burst of events (a round finishing) costs one fetch
  var stream = null;
  var timer = null;
  var busy = false;
  var again = false;

  function status(text) {
    var box = document.getElementById("live-status");
    if (!box) return;
    box.hidden = !text;
    var line = box.querySelector(".live-text");
    if (text) (line || box).textContent = text;
  }

  function swap(fresh) {
    var regions = document.querySelectorAll("[data-live]");
    for (var i = 0; i < regions.length; i++) {
      var old = regions[i];
      var next = old.id ? fresh.getElementById(old.id) : null;
      if (next) old.parentNode.replaceChild(document.importNode(next, true), old);
    }
  }

  function refetch() {
    timer = null;
    if (busy) { again = true; return; }
    busy = true;
    fetch(window.location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        swap(fresh);
        if (!fresh.body.hasAttribute("data-live-events")) {
          stream.close();
          status("");
        }
      }, function () {
        status("Live: could not fetch the latest results; retrying on the next one.");
      })
      .then(function () {
        busy = false;
        if (again) { again = false; later(); }
      });
  }

  function later() {
    if (timer === null) timer = setTimeout(refetch, DELAY_MS);
  }

  stream = new EventSource(url);
  var opened = false;
  stream.onopen = function () {
    status("Live: this page updates as results arrive.");
    if (opened) later();  // back after a break the stream could not replay: catch up once
    opened = true;
  };
  stream.onerror = function () {
    if (stream.readyState === EventSource.CLOSED) status("Live updates stopped: reload the page for new results.");
    else status("Live: reconnecting\u2026");
  };
  EVENTS.forEach(function (name) { stream.addEventListener(name, later); });
})();
