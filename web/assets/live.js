// New photos appear by themselves. Where nginx has Nchan
// (deploy/nginx/ireporter-live.conf), /iReporter/live is an EventSource
// whose messages are the photos as they are committed; elsewhere (Apache
// hosts), and while a subscription is down, the page polls `stream` with
// `since` instead (docs/API.md, "Live stream").
import { API_URL, rows } from './api.js';
import { sharedEventSource, spread } from './shared-source.js';

const LIVE_URL = `${API_URL}live`;
const POLL_MS = 5000;
/** How soon a stream refused is asked for again (ms, give or take a quarter). */
const RESUBSCRIBE_MS = 30000;

/**
 * Whether /iReporter/live is an event stream here. A fetch, not an
 * EventSource, asks: without Nchan the path is the API, whose JSON answer
 * an EventSource would report as an error in the console.
 */
async function liveAvailable() {
  if (!('EventSource' in window)) return false;
  const controller = new AbortController();
  try {
    const response = await fetch(LIVE_URL, { headers: { Accept: 'text/event-stream' }, signal: controller.signal });
    return response.ok && (response.headers.get('Content-Type') || '').startsWith('text/event-stream');
  } catch {
    return false;
  } finally {
    controller.abort(); // only the headers were wanted
  }
}

/**
 * Follows the stream until the returned function is called.
 * `catchUp()` fetches and shows what is newer than the newest shown (after
 * each subscription opens: what came between the page's fetch and then;
 * and on each poll); `received(photos)` shows the photos a message brought;
 * `modeChanged('live' | 'polling')` says how new photos arrive now.
 */
export function follow({ catchUp, received, modeChanged }) {
  let source = null;
  let timer = 0;
  let resubscribing = 0;
  let stopped = false;

  const subscribed = () => source !== null && source.readyState === EventSource.OPEN;

  /** Catches up every 5 s while not subscribed, and until a catch-up succeeds. */
  function poll() {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      let caughtUp = true;
      try { await catchUp(); } catch { caughtUp = false; }
      if (!stopped && (!subscribed() || !caughtUp)) poll();
    }, POLL_MS);
  }

  function subscribe() {
    source = sharedEventSource(LIVE_URL, {
      open: () => {
        clearTimeout(timer);
        modeChanged('live');
        catchUp().catch(poll); // the messages still come; what came before them, once this can be asked
      },
      message: (data) => {
        try { received(rows(JSON.parse(data))); } catch { /* not a photo: ignore it */ }
      },
      error: (closed) => {
        // Taken up again by itself unless it was closed for good (refused:
        // a full limit_conn, a 502), then asked for again; poll meanwhile.
        if (closed) {
          source = null;
          clearTimeout(resubscribing);
          resubscribing = setTimeout(() => { if (!stopped) subscribe(); }, spread(RESUBSCRIBE_MS));
        }
        modeChanged('polling');
        poll();
      },
    });
  }

  liveAvailable().then((live) => {
    if (stopped) return;
    if (live) {
      subscribe();
    } else {
      modeChanged('polling');
      poll();
    }
  });
  return () => {
    stopped = true;
    clearTimeout(timer);
    clearTimeout(resubscribing);
    source?.close();
    source = null;
  };
}
