// One EventSource for all of a browser's tabs of the site. Over HTTP/1.1 a
// browser opens at most 6 connections to a host, and an EventSource holds
// one for as long as it is open: three tabs on Explore, signed in (the
// photos' stream and the notifications', each), held all six, and every
// other request of every tab waited for one. So one tab, the holder of a
// Web Lock named after the stream, opens it and passes on what it hears on
// a BroadcastChannel; the others listen there, each in line for the lock.
// When that tab stops listening or is closed, the lock goes to the next in
// line, which opens the stream anew: each tab hears its `open`, as after a
// reconnection, and catches up. Browsers give Web Locks only to secure
// pages (HTTPS, and http://localhost); on a site served over plain HTTP the
// tabs take turns through a lease in localStorage instead (`leaseTurn`).

/**
 * Listens to the event stream at `url` with the browser's other tabs:
 * `open()`, `message(data)` and `error(closed)` as an EventSource's
 * (`closed`: refused or ended for good, it is not opened again). Returns
 * `readyState` (EventSource's values) and `close()`. Where the browser has
 * no BroadcastChannel, or neither Web Locks nor localStorage, an
 * EventSource of the tab's own.
 */
export function sharedEventSource(url, { open, message, error }) {
  const takeTurn = 'locks' in navigator ? lockTurn : (storageWorks() ? leaseTurn : null);
  if (!takeTurn || !('BroadcastChannel' in window)) return ownEventSource(url, { open, message, error });
  const name = `ireporter.live ${new URL(url, location.href).href}`;
  const channel = new BroadcastChannel(name);
  const inLine = new AbortController();
  const me = Math.random().toString(36).slice(2);
  let readyState = EventSource.CONNECTING;
  let source = null; // while this tab holds the lock
  let release = null; // lets go of the lock
  let ended = false;

  const end = () => {
    ended = true;
    readyState = EventSource.CLOSED;
    const refused = source?.readyState === EventSource.CLOSED;
    source?.close();
    source = null;
    inLine.abort();
    // Refused: the lock kept a moment, for the others to hear it before
    // their turn (each would open it, to be refused in turn).
    if (refused) setTimeout(() => release?.(), REFUSAL_HOLD_MS); else release?.();
    channel.close();
    removeEventListener('pagehide', leaving);
  };

  const tell = (news) => channel.postMessage(news);
  const hear = (news) => {
    if (news.kind === 'open') {
      readyState = EventSource.OPEN;
      open();
    } else if (news.kind === 'message') {
      message(news.data);
    } else if (news.kind === 'error') {
      readyState = news.closed ? EventSource.CLOSED : EventSource.CONNECTING;
      if (news.closed) end();
      error(news.closed);
    }
  };

  channel.onmessage = ({ data: news }) => {
    if (ended) return;
    if (news.kind === 'hello') {
      if (source?.readyState === EventSource.OPEN) tell({ kind: 'open', to: news.from });
    } else if (news.to === undefined || news.to === me) {
      hear(news);
    }
  };

  const lead = () => {
    // Open as the last tab listening said, which left without a word (closed, crashed).
    if (readyState === EventSource.OPEN) hear({ kind: 'error', closed: false });
    source = new EventSource(url);
    source.onopen = () => {
      tell({ kind: 'open' });
      hear({ kind: 'open' });
    };
    source.onmessage = (event) => {
      tell({ kind: 'message', data: event.data });
      message(event.data);
    };
    source.onerror = () => {
      const news = { kind: 'error', closed: source.readyState === EventSource.CLOSED };
      tell(news);
      hear(news);
    };
  };

  const queue = () => takeTurn(name, inLine.signal, () => new Promise((resolve) => {
    release = resolve;
    if (ended) resolve(); else lead();
  }), stepDown).catch(() => { /* out of line: closed before its turn */ });
  // A lease lost while the browser froze this tab: another tab listens now. Back in line.
  const stepDown = () => {
    source?.close();
    source = null;
    release = null;
    if (ended) return;
    queue();
    tell({ kind: 'hello', from: me });
  };
  queue();
  // The one listening now, if any, says so to this tab alone.
  tell({ kind: 'hello', from: me });
  // The tab closed or left while listening for the others: they poll until the next in line has it open.
  const leaving = () => { if (source) tell({ kind: 'error', closed: false }); };
  addEventListener('pagehide', leaving);

  return {
    get readyState() { return readyState; },
    close() {
      if (ended) return;
      // The tabs listening through this one: to the next in line, which opens it anew.
      if (source) tell({ kind: 'error', closed: false });
      end();
    },
  };
}

/**
 * `ms`, give or take a quarter: the tabs and browsers refused together
 * (a full `limit_conn`, a restart) do not all come back together.
 */
export function spread(ms) {
  return ms * (0.75 + Math.random() / 2);
}

/** How long a tab whose stream was refused keeps the lock (ms). */
const REFUSAL_HOLD_MS = 1000;

/**
 * Waits in line for the lock `name` until `signal` aborts, then runs
 * `holding()` and keeps the lock until the promise it returns resolves.
 */
function lockTurn(name, signal, holding) {
  return navigator.locks.request(name, { signal }, holding);
}

/** How long a lease lasts unless renewed, and how often it is renewed (ms). */
const LEASE_MS = 6000;
const RENEW_MS = 2000;
/** How long a claim is left before it is read back: a later claim of another tab wins. */
const CLAIM_SETTLE_MS = 200;
const LEASE_PREFIX = 'ireporter.lease ';

/**
 * `lockTurn` for pages without Web Locks: a lease in localStorage (the tab
 * and when its lease ends), renewed while held and given up when the
 * holding ends or the page goes. The others wait for it to be given up (a
 * `storage` event) or to end. Two tabs claiming it at once both read it
 * back, and the one written last keeps it. A holder whose lease ended
 * unrenewed (the browser froze it, or ran its timers only once a minute in
 * the background) finds another's there at its next renewal: `lost()`
 * tells it that its turn has ended. (Asking a holder whether it is alive
 * would not do: a tab frozen in Chrome still answers a BroadcastChannel,
 * while its stream and its timers wait.) The key names the stream by a
 * hash: a person's notification channel is as private as a session
 * cookie, and localStorage is on disk.
 */
function leaseTurn(name, signal, holding, lost) {
  const key = LEASE_PREFIX + hashed(name);
  const me = Math.random().toString(36).slice(2);
  const read = () => {
    try { return JSON.parse(localStorage.getItem(key)); } catch { return null; }
  };
  const claim = () => localStorage.setItem(key, JSON.stringify({ tab: me, until: Date.now() + LEASE_MS }));
  const othersHold = () => {
    const lease = read();
    return lease !== null && lease.tab !== me && lease.until > Date.now();
  };
  const giveUp = () => { if (read()?.tab === me) localStorage.removeItem(key); };
  sweepEndedLeases();
  return new Promise((resolve, reject) => {
    let timer = 0;
    let renewing = 0;
    const stopWaiting = () => {
      clearTimeout(timer);
      removeEventListener('storage', given);
      signal.removeEventListener('abort', abort);
    };
    const abort = () => {
      stopWaiting();
      giveUp();
      reject(signal.reason);
    };
    const given = (event) => { if (event.key === key && event.newValue === null) attempt(); };
    const attempt = () => {
      clearTimeout(timer);
      if (othersHold()) {
        timer = setTimeout(attempt, spread(RENEW_MS));
        return;
      }
      claim();
      timer = setTimeout(() => (othersHold() ? attempt() : take()), CLAIM_SETTLE_MS);
    };
    const ended = () => {
      clearInterval(renewing);
      removeEventListener('pagehide', giveUp);
      resolve();
    };
    const take = () => {
      stopWaiting();
      claim();
      addEventListener('pagehide', giveUp);
      renewing = setInterval(() => {
        if (!othersHold()) return claim();
        ended();
        lost();
      }, RENEW_MS);
      Promise.resolve(holding()).finally(() => {
        giveUp();
        ended();
      });
    };
    signal.addEventListener('abort', abort, { once: true });
    addEventListener('storage', given);
    attempt();
  });
}

/** Leases whose tabs went without giving them up (a crash, a tab discarded), a minute after they ended. */
function sweepEndedLeases() {
  for (let i = localStorage.length - 1; i >= 0; i -= 1) {
    const key = localStorage.key(i);
    if (!key?.startsWith(LEASE_PREFIX)) continue;
    let until = 0;
    try { until = JSON.parse(localStorage.getItem(key)).until; } catch { /* not a lease: swept */ }
    if (!(until > Date.now() - 60000)) localStorage.removeItem(key);
  }
}

/** A stream's name in a lease's key: FNV-1a, 32 bits (a name, not a secret; crypto.subtle needs HTTPS). */
function hashed(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/** Whether localStorage can be written (not in some private modes, nor where storage is blocked). */
function storageWorks() {
  try {
    localStorage.setItem('ireporter.probe', '1');
    localStorage.removeItem('ireporter.probe');
    return true;
  } catch {
    return false;
  }
}

function ownEventSource(url, { open, message, error }) {
  const source = new EventSource(url);
  source.onopen = () => open();
  source.onmessage = (event) => message(event.data);
  source.onerror = () => error(source.readyState === EventSource.CLOSED);
  return source;
}
