// nginx JavaScript (njs, Debian's libnginx-mod-http-js) for
// ireporter-stream-answer.conf: answers the 2012 app's plain `stream` (the
// body is `command=stream` and nothing else, urlencoded or as the app's one
// multipart part) from the file the server keeps (`stream_answer_file`),
// without a FastCGI round trip; every other request, and a stream while
// the file is missing or ended, goes to the server (@ireporter_api).
//
// The file's first line is when it ends (Unix milliseconds), then the
// answer. The server removes it before it answers any change of the
// stream, so what is read here is never older than the last change.
import fs from 'fs';

const FORM = 'application/x-www-form-urlencoded';
const MULTIPART = /^multipart\/form-data\s*;\s*boundary=(?:"([^"]+)"|([^\s";]+))\s*$/i;

// Only bodies of a plain stream's length reach it (ireporter-stream-answer.conf).
function isPlainStream(r) {
    if (r.method !== 'POST' || r.variables.args) return false;
    let body;
    try {
        body = r.requestText;
    } catch (e) {
        return false; // no body in memory (nginx wrote it to a file): not answered here
    }
    const type = r.headersIn['Content-Type'] || '';
    if (type.split(';')[0].trim().toLowerCase() === FORM) return body === 'command=stream';
    const multipart = MULTIPART.exec(type);
    if (!multipart) return false;
    const boundary = multipart[1] || multipart[2];
    return body === '--' + boundary + '\r\nContent-Disposition: form-data; name="command"\r\n\r\nstream\r\n--'
        + boundary + '--\r\n';
}

// The kept answer, or null when there is none or it has ended.
function keptAnswer(path) {
    let file;
    try {
        file = fs.readFileSync(path);
    } catch (e) {
        return null;
    }
    const newline = file.indexOf(10);
    if (newline <= 0 || Number(file.slice(0, newline).toString()) <= Date.now()) return null;
    return file.slice(newline + 1);
}

function answer(r) {
    const kept = isPlainStream(r) ? keptAnswer(r.variables.ireporter_stream_answer) : null;
    if (kept === null) {
        r.internalRedirect('@ireporter_api');
        return;
    }
    // The server's own headers for this answer (those of the PHP original's session_start()).
    const headers = r.headersOut;
    headers['Content-Type'] = 'application/json';
    headers['Expires'] = 'Thu, 19 Nov 1981 08:52:00 GMT';
    headers['Cache-Control'] = 'no-store, no-cache, must-revalidate';
    headers['Pragma'] = 'no-cache';
    headers['X-Request-Id'] = r.variables.request_id;
    r.return(200, kept);
}

export default { answer };
