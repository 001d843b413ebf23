// One EventSource for all of a browser's tabs of the site. Over HTTP/1.1 a
// browser opens at most 6 connections to a host, and an EventSource holds
// one for as long as it is open: three tabs on Explore, signed in (the
// photos' stream and the notifications', each), held all six, and every
// other request of every tab waited for one. So one tab, the holder of a
// Web Lock named after the stream, opens it and passes on what it hears on
// a BroadcastChannel; the others listen there, each in line for the lock.
// When that tab stops listening or is closed, the lock goes to the next in
// line, which opens the stream anew: each tab hears its `open`, as after a
// reconnection, and catches up.

/**
 * Listens to the event stream at `url` with the browser's other tabs:
 * `open()`, `message(data)` and `error(closed)` as an EventSource's
 * (`closed`: refused or ended for good, it is not opened again). Returns
 * `readyState` (EventSource's values) and `close()`. Where the browser has
 * no Web Locks or BroadcastChannel, an EventSource of the tab's own: Web
 * Locks are only given to secure pages (HTTPS, and http://localhost).
 */
export function sharedEventSource(url, { open, message, error }) {
  if (!('locks' in navigator) || !('BroadcastChannel' in window)) return ownEventSource(url, { open, message, error });
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

  navigator.locks.request(name, { signal: inLine.signal }, () => new Promise((resolve) => {
    release = resolve;
    if (ended) resolve(); else lead();
  })).catch(() => { /* out of line: closed before its turn */ });
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

function ownEventSource(url, { open, message, error }) {
  const source = new EventSource(url);
  source.onopen = () => open();
  source.onmessage = (event) => message(event.data);
  source.onerror = () => error(source.readyState === EventSource.CLOSED);
  return source;
}
