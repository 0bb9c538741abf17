// "Replay the search": step through the allocator's recorded steps; tiles and counter bars follow.
(function () {
  "use strict";
  // The page's language: strings from Django's JavaScript catalogue (/jsi18n/), English without it.
  function _(text) { return window.gettext ? window.gettext(text) : text; }
  function fill(text, values) {
    return text.replace(/%\((\w+)\)s/g, function (m, key) { return String(values[key]); });
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function describe(step) {
    if (!step) return _("Before the first step: nothing is picked yet.");
    var where = step.claim ? fill(_("claim %(claim)s, request %(request)s"), step) : "";
    switch (step.kind) {
      case "enter": return fill(_("%(where)s: the search starts on this request."), { where: where });
      case "reject": return fill(_("%(where)s: %(device)s rejected — %(reason)s"), { where: where, device: step.device, reason: step.reason });
      case "pick": return fill(_("%(where)s: %(device)s picked."), { where: where, device: step.device });
      case "undo": return fill(_("%(where)s: %(device)s given up again (the rest could not be completed with it)."), { where: where, device: step.device });
      case "done":
        return step.outcome === "success" ? _("Done: every claim has its devices.")
          : step.outcome === "gave-up" ? _("The search gave up (step or time limit).")
          : _("Done: no combination works; the search failed.");
      default: return where;
    }
  }

  // A step as the page sends it: [kind, claim, request, pool, device, reason or outcome, counters, code],
  // each string an index into data.strings (see explain.trace_data).
  function expand(strings, s) {
    function text(i) { return i === null ? undefined : strings[i]; }
    var step = { kind: text(s[0]), claim: text(s[1]), request: text(s[2]), pool: text(s[3]), device: text(s[4]) };
    if (step.kind === "reject") step.reason = text(s[5]);
    else if (step.kind === "done") step.outcome = text(s[5]);
    if (s[6]) {
      step.counters = s[6].map(function (c) { return { counterSet: text(c[0]), counter: text(c[1]), amount: c[2] }; });
    }
    return step;
  }

  // The replay is drawn (its steps read, its tiles, counter bars and timeline made) only when someone may
  // look at it: when it comes into view, when a control is used, or once the page is idle after the run. A
  // run's answer is swapped in and painted without that work, and a search replayed hundreds of steps long
  // costs nothing until then. Before it is drawn the panel shows step 0 as the server wrote it.
  function Replay(root) {
    var self = this;
    this.root = root;
    this.built = false;
    this.source = root.querySelector("#replay-data").textContent;
    this.scrub = root.querySelector("[data-replay-scrub]");
    this.position = root.querySelector("[data-replay-position]");
    this.text = root.querySelector("[data-replay-text]");
    this.head = root.querySelector("[data-replay-head]");
    this.playButton = root.querySelector("[data-replay-play]");
    this.speed = root.querySelector("[data-replay-speed]");
    this.timer = null;
    this.fingerprint = fingerprint(this.source);
    root.querySelectorAll("[data-replay-go]").forEach(function (button) {
      button.addEventListener("click", function () { self.build(); self.stop(); self.go(button.getAttribute("data-replay-go")); });
    });
    root.querySelectorAll("[data-replay-jump]").forEach(function (button) {
      button.addEventListener("click", function () {
        self.build();
        self.stop();
        self.jump(button.getAttribute("data-replay-jump"), parseInt(button.getAttribute("data-replay-dir"), 10));
      });
    });
    if (this.playButton) this.playButton.addEventListener("click", function () { self.build(); self.timer ? self.stop() : self.play(); });
    if (this.speed) this.speed.addEventListener("change", function () { if (self.timer) { self.stop(); self.play(); } });
    this.scrub.addEventListener("input", function () { self.build(); self.stop(); self.show(parseInt(self.scrub.value, 10) || 0, true); });
    ["pointerdown", "focusin", "keydown"].forEach(function (type) {
      root.addEventListener(type, function () { self.build(); }, true);
    });
    if (window.IntersectionObserver) {  // also tells the next replay whether this one was on screen
      this.observer = new IntersectionObserver(function (entries) {
        inView = entries.some(function (entry) { return entry.isIntersecting; });
        if (inView) self.build();
      });
      this.observer.observe(root);
    }
    // A re-run whose search did not change keeps the step it was at (and keeps playing); a new search starts over.
    var kept = remembered && remembered.fingerprint === this.fingerprint ? remembered : null;
    if ((kept && (kept.count > 0 || kept.playing)) || inView) {
      this.build();
      return;
    }
    var later = window.requestIdleCallback || function (callback) { return window.setTimeout(callback, 50); };
    later(function () { self.build(); }, { timeout: 1000 });
  }

  var remembered = null;  // {fingerprint, count, playing} of the replay on the page
  var inView = false;     // the replay on the page was on screen (so the next one is drawn at once)

  Replay.prototype.build = function () {
    if (this.built || !this.root.isConnected) return;
    this.built = true;
    var self = this, root = this.root;
    var data = JSON.parse(this.source);
    this.steps = data.steps.map(function (s) { return expand(data.strings, s); });
    this.tiles = {};
    this.base = {};
    var tileBox = root.querySelector("[data-replay-tiles]");
    data.tiles.forEach(function (pool) {  // [pool, [[device, state before], …]]
      pool[1].forEach(function (d) {
        var key = pool[0] + "/" + d[0];
        var tile = el("span", "tile", d[0]);
        tile.setAttribute("data-key", key);
        tile.appendChild(el("small", "", d[1] || "free"));
        tile.title = pool[0];
        tileBox.appendChild(tile);
        self.tiles[key] = tile;
        self.base[key] = d[1];
      });
    });
    this.bars = {};
    var barBox = root.querySelector("[data-replay-bars]");
    data.bars.forEach(function (set) {  // [pool, counter set, [[counter, total, before, total as written], …]]
      set[2].forEach(function (c) {
        var total = c[1], taken = c[2];
        var row = el("div", "bar-row");
        row.appendChild(el("span", "bar-label", set[1] + " " + c[0]));
        var bar = el("div", "bar");
        var before = el("span", "seg before");
        var now = el("span", "seg now");
        before.style.width = (total > 0 ? 100 * taken / total : 0) + "%";
        bar.appendChild(before);
        bar.appendChild(now);
        row.appendChild(bar);
        var text = el("span", "bar-text");
        row.appendChild(text);
        barBox.appendChild(row);
        self.bars[set[0] + "|" + set[1] + "|" + c[0]] = { now: now, text: text, total: total, before: taken, label: c[3] };
      });
    });
    this.buildTimeline(root.querySelector("[data-replay-timeline]"));
    var kept = remembered && remembered.fingerprint === this.fingerprint ? remembered : null;
    this.show(kept ? kept.count : 0);
    if (kept && kept.playing) this.play();
  };

  // Before a run's answer replaces the replay: stop it and drop what it drew, which the swap would otherwise
  // walk element by element.
  Replay.prototype.release = function () {
    if (this.timer) window.clearInterval(this.timer);
    if (this.observer) this.observer.disconnect();
    this.root.querySelectorAll("[data-replay-tiles], [data-replay-bars], [data-replay-timeline]").forEach(function (box) {
      box.textContent = "";
    });
  };

  // A cheap fingerprint of the recorded steps (FNV-1a over the JSON the page was sent).
  function fingerprint(text) {
    var hash = 0x811c9dc5;
    for (var i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
    return text.length + ":" + hash.toString(16);
  }

  Replay.prototype.go = function (where) {
    var at = parseInt(this.scrub.value, 10) || 0;
    var next = { first: 0, back: at - 1, forward: at + 1, last: this.steps.length }[where];
    this.show(Math.max(0, Math.min(this.steps.length, next)), true);
  };

  // The next (dir 1) or previous (dir -1) step of a kind: "undo" (a backtrack), "reject" or "pick".
  Replay.prototype.jump = function (kind, dir) {
    var at = parseInt(this.scrub.value, 10) || 0;  // steps shown; the current step is at index at - 1
    for (var i = at - 1 + dir; i >= 0 && i < this.steps.length; i += dir) {
      if (this.steps[i].kind === kind) { this.show(i + 1, true); return; }
    }
    this.text.textContent = describe(at > 0 ? this.steps[at - 1] : null) + " " +
      (dir > 0 ? _("(no further step of that kind)") : _("(no earlier step of that kind)"));
  };

  Replay.prototype.play = function () {
    var self = this;
    if ((parseInt(this.scrub.value, 10) || 0) >= this.steps.length) this.show(0);
    var rate = parseFloat(this.speed ? this.speed.value : "10") || 10;  // steps a second
    var every = Math.max(20, 1000 / rate), stride = Math.max(1, Math.round(rate * every / 1000));
    this.timer = window.setInterval(function () {
      if (!self.root.isConnected) { self.stop(); return; }
      var at = parseInt(self.scrub.value, 10) || 0;
      self.show(Math.min(self.steps.length, at + stride), true);
      if (at + stride >= self.steps.length) self.stop();
    }, every);
    this.setPlaying(true);
  };

  Replay.prototype.stop = function () {
    if (this.timer) window.clearInterval(this.timer);
    this.timer = null;
    this.setPlaying(false);
  };

  Replay.prototype.setPlaying = function (on) {
    if (this.playButton) {
      this.playButton.textContent = on ? "❚❚ " + _("Pause") : "▶▶ " + _("Play");
      this.playButton.setAttribute("aria-pressed", on ? "true" : "false");
    }
    if (remembered && remembered.fingerprint === this.fingerprint && this.root.isConnected) remembered.playing = on;
  };

  // The timeline: one mark per backtrack, a cursor at the step shown; a click goes to that step.
  Replay.prototype.buildTimeline = function (strip) {
    if (!strip) return;
    var self = this, total = this.steps.length;
    this.steps.forEach(function (step, i) {
      if (step.kind !== "undo" && step.kind !== "done") return;
      var mark = el("span", "mark" + (step.kind === "done" ? " mark-done" : ""));
      mark.style.left = (total > 0 ? 100 * (i + 1) / total : 0) + "%";
      strip.appendChild(mark);
    });
    this.cursor = el("span", "cursor");
    strip.appendChild(this.cursor);
    strip.setAttribute("data-backtracks", String(this.steps.filter(function (s) { return s.kind === "undo"; }).length));
    strip.addEventListener("click", function (event) {
      var box = strip.getBoundingClientRect();
      self.stop();
      self.show(Math.max(0, Math.min(total, Math.round(total * (event.clientX - box.left) / box.width))), true);
    });
  };

  // The state after `count` steps, recomputed from the start (the trace is bounded, so this stays cheap).
  Replay.prototype.show = function (count, follow) {
    var picked = {}, marks = {}, used = {};
    var i, step, key;
    for (i = 0; i < count; i++) {
      step = this.steps[i];
      key = step.pool + "/" + step.device;
      if (step.kind === "enter") {
        marks = {};  // a new request: earlier rejections were for another request
      } else if (step.kind === "reject") {
        marks[key] = { state: "rejected", reason: step.reason };
      } else if (step.kind === "pick" || step.kind === "undo") {
        var sign = step.kind === "pick" ? 1 : -1;
        if (sign > 0) { picked[key] = step; delete marks[key]; } else { delete picked[key]; marks[key] = { state: "undone" }; }
        (step.counters || []).forEach(function (c) {
          var k = step.pool + "|" + c.counterSet + "|" + c.counter;
          used[k] = (used[k] || 0) + sign * c.amount;
        });
      }
    }
    var current = count > 0 ? this.steps[count - 1] : null;
    var currentKey = current && current.device ? current.pool + "/" + current.device : null;
    for (key in this.tiles) {
      var tile = this.tiles[key], label = tile.querySelector("small"), state, note = "";
      if (picked[key]) { state = "picked"; note = picked[key].claim + " · " + picked[key].request; }
      else if (marks[key]) { state = marks[key].state; note = marks[key].reason || _("given up"); }
      else { state = this.base[key] || "free"; }
      tile.className = "tile tile-" + state + (key === currentKey ? " tile-current" : "");
      label.textContent = stateWord(state);
      tile.title = note || stateWord(state);
    }
    for (key in this.bars) {
      var bar = this.bars[key], now = used[key] || 0;
      bar.now.style.width = (bar.total > 0 ? Math.max(0, 100 * now / bar.total) : 0) + "%";
      var free = bar.total - bar.before - now;
      bar.text.textContent = fill(_("this attempt %(now)s, free %(free)s of %(counter)s"), { now: percent(now, bar.total), free: percent(free, bar.total), counter: bar.label });
      bar.text.setAttribute("data-now", String(now));
    }
    this.scrub.value = String(count);
    this.position.textContent = fill(_("step %(count)s of %(total)s"), { count: count, total: this.steps.length });
    this.text.textContent = describe(current);
    if (this.cursor) this.cursor.style.left = (this.steps.length > 0 ? 100 * count / this.steps.length : 0) + "%";
    remembered = { fingerprint: this.fingerprint, count: count, playing: !!this.timer };
    if (follow && currentKey && this.tiles[currentKey]) this.keepInView(this.tiles[currentKey]);
  };

  // The considered tile stays on screen, below the sticky controls (their height is the tiles' scroll margin).
  Replay.prototype.keepInView = function (tile) {
    if (this.head) this.root.style.setProperty("--replay-head", (this.head.offsetHeight + 12) + "px");
    tile.scrollIntoView({ block: "nearest", inline: "nearest" });
    // Result panels off screen are laid out only when they come into view (content-visibility), which can
    // move the tile after the scroll: look again over the next frames and follow it.
    var frames = 3;
    function again() {
      if (!tile.isConnected || !tile.classList.contains("tile-current")) return;
      var box = tile.getBoundingClientRect();
      if (box.bottom <= 0 || box.top >= window.innerHeight) tile.scrollIntoView({ block: "nearest", inline: "nearest" });
      if (--frames > 0) window.requestAnimationFrame(again);
    }
    window.requestAnimationFrame(again);
  };

  // A tile's state word (the device map's, and the replay's own picked/rejected/undone).
  function stateWord(state) {
    var words = { picked: _("picked"), rejected: _("rejected"), undone: _("undone"), chosen: _("chosen"),
      tried: _("tried"), "in-use": _("in use"), shared: _("shared"), blocked: _("blocked"), tainted: _("tainted"),
      free: _("free") };
    return words[state] || state;
  }

  function percent(part, whole) { return whole > 0 ? Math.round(100 * part / whole) + "%" : "0%"; }

  function init(scope) {
    (scope || document).querySelectorAll("[data-replay]").forEach(function (root) {
      if (root.getAttribute("data-ready")) return;
      root.setAttribute("data-ready", "1");
      root.replay = new Replay(root);
    });
  }

  document.addEventListener("DOMContentLoaded", function () { init(document); });
  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    if (event.detail.shouldSwap === false || !target || !target.querySelectorAll) return;
    target.querySelectorAll("[data-replay]").forEach(function (root) { if (root.replay) root.replay.release(); });
  });
  document.addEventListener("htmx:afterSettle", (window.oncePerSwap || function (f) { return f; })(function () { init(document); }));
})();
