// The Herald console's only script: keyboard shortcuts, the history slider, a token kept
// for the tab only, and the live shade. Data from the store is never inserted as markup:
// the live shade swaps in nodes the server rendered (and escaped), parsed by DOMParser
// (which runs no script); everything else is set with textContent.
"use strict";

(function () {
  const body = document.body;
  const served = body.dataset.mode === "served";
  const tabKey = "herald-console-signed-in";

  // The token stays with the tab that signed in: a tab that did not sign in drops the
  // session cookie and goes to the sign-in page.
  const signin = document.getElementById("signin");
  if (signin) {
    signin.addEventListener("submit", () => sessionStorage.setItem(tabKey, "1"));
  } else if (served && !sessionStorage.getItem(tabKey)) {
    location.replace("/console/sign-out?next=" + encodeURIComponent(location.pathname + location.search));
    return;
  }
  for (const link of document.querySelectorAll("a.signout")) {
    link.addEventListener("click", () => sessionStorage.removeItem(tabKey));
  }

  // Keyboard: "/" focuses the filter, ← and → step through history.
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    const typing = target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "/" && !typing) {
      const field = document.querySelector("[data-shortcut='/']");
      if (field) { event.preventDefault(); field.focus(); field.select(); }
      return;
    }
    if (typing && target.type !== "range") return;
    const link = document.querySelector("a[data-key='" + event.key + "']");
    if (link) { event.preventDefault(); location.href = link.href; }
  });

  // The history slider: release to show the state at that seq. Delegated, since the live
  // shade replaces the slider with each update.
  document.addEventListener("input", (event) => {
    const field = document.getElementById("at");
    if (event.target.id === "at-slider" && field) field.value = event.target.value;
  });
  document.addEventListener("change", (event) => {
    if (event.target.id !== "at-slider") return;
    const url = new URL(location.href);
    url.searchParams.set("at", event.target.value);
    url.searchParams.delete("page");
    location.href = url.toString();
  });

  // The live shade: the account's update stream; each event re-reads this page and swaps
  // the shade in. EventSource resumes with Last-Event-ID after a dropped connection; when
  // the server refuses a reconnection (restarting) it is opened again after the last seq.
  const live = body.dataset.live;
  if (!live) return;
  let lastSeq = body.dataset.seq || "0";
  let source = null;
  let pending = null;
  let reading = false;
  let again = false;

  function say(text, state) {
    const status = document.getElementById("live-status");
    if (!status) return;
    status.textContent = text;
    status.dataset.state = state;
  }

  async function refresh() {
    if (reading) { again = true; return; }
    reading = true;
    try {
      const response = await fetch(location.href, { credentials: "same-origin", cache: "no-store" });
      if (response.ok) {
        const doc = new DOMParser().parseFromString(await response.text(), "text/html");
        const fresh = doc.getElementById("shade-root");
        const old = document.getElementById("shade-root");
        if (fresh && old) {
          const node = document.importNode(fresh, true);
          // Keep the stepper someone is typing in or dragging.
          const stepper = old.querySelector("form.stepper");
          if (stepper && stepper.contains(document.activeElement)) {
            const replaced = node.querySelector("form.stepper");
            if (replaced) replaced.replaceWith(stepper);
          }
          old.replaceWith(node);
          body.dataset.shownSeq = fresh.dataset.seq || "";
          say("live · seq " + lastSeq, "up");
        }
      }
    } catch (error) {
      say("reconnecting…", "down");
    } finally {
      reading = false;
      if (again) { again = false; refresh(); }
    }
  }

  function schedule() {
    if (pending) return;
    pending = setTimeout(() => { pending = null; refresh(); }, 50);
  }

  function connect() {
    source = new EventSource(live + "?after=" + encodeURIComponent(lastSeq));
    source.onopen = () => { say("live", "up"); schedule(); };
    source.onmessage = (event) => {
      if (event.lastEventId) lastSeq = event.lastEventId;
      say("live · seq " + lastSeq, "up");
      schedule();
    };
    source.onerror = () => {
      say("reconnecting…", "down");
      if (source.readyState === EventSource.CLOSED) {
        source.close();
        setTimeout(connect, 1000);
      }
    };
  }
  connect();
})();
