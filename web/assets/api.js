// The iReporter API as the 2012 app calls it: every command a multipart
// POST to /iReporter/ with a `command` field, the session in the PHPSESSID
// cookie (HttpOnly: the browser keeps it), answers {"result":[…]},
// {"successful":1} or {"error":"…"}.

export const API_URL = '/iReporter/';

/** A failure the server answered with {"error": "…"}: its text is for people. */
export class APIError extends Error {}

function form(command, fields) {
  const body = new FormData();
  body.append('command', command);
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined && value !== null && value !== '') body.append(name, value);
  }
  return body;
}

function decode(text) {
  if (text === '') return null; // logout and unknown commands answer nothing
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new APIError('The server sent an answer this page cannot read.');
  }
  if (json && typeof json.error === 'string') throw new APIError(json.error);
  return json;
}

async function send(command, fields) {
  try {
    return await fetch(API_URL, { method: 'POST', body: form(command, fields), credentials: 'same-origin' });
  } catch {
    throw new APIError('The server cannot be reached. Check the connection and try again.');
  }
}

/** Sends a command; resolves to the parsed answer (null for an empty one). */
export async function call(command, fields = {}) {
  const response = await send(command, fields);
  if (!response.ok) throw new APIError(`The server answered HTTP ${response.status}.`);
  return decode(await response.text());
}

/** A command whose answer is an image (preview): resolves to a Blob. */
export async function callForImage(command, fields) {
  const response = await send(command, fields);
  if (response.ok && (response.headers.get('Content-Type') || '').startsWith('image/')) return response.blob();
  decode(await response.text()); // throws the server's own error text, if it sent one
  throw new APIError('The server sent no image.');
}

/**
 * Upload with progress (fetch cannot report upload progress); `signal`
 * aborts it (an AbortError), as a Cancel while it is on its way asks.
 */
export function upload(fields, onProgress, signal) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', API_URL);
    signal?.addEventListener('abort', () => request.abort());
    request.onabort = () => reject(new DOMException('The upload was cancelled.', 'AbortError'));
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onload = () => {
      try {
        resolve(decode(request.responseText));
      } catch (error) {
        reject(error);
      }
    };
    request.onerror = () => reject(new APIError('The upload was interrupted. Try again.'));
    request.send(form('upload', fields));
  });
}

/** The photos of an answer {"result":[…]} (an empty list for anything else). */
export function rows(answer) {
  return answer && Array.isArray(answer.result) ? answer.result : [];
}

export const photoURL = (id) => `${API_URL}upload/${encodeURIComponent(id)}.jpg`;
export const thumbnailURL = (id) => `${API_URL}upload/${encodeURIComponent(id)}-thumb.jpg`;
