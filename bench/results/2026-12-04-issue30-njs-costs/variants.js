// The variants run.sh measures: the shipped handler
// (deploy/nginx/ireporter-stream-answer.js) with one part taken out at a
// time, to see what each part costs nginx.
import fs from 'fs';

// Read once, when nginx loads the module (run.sh writes its directory for @D@):
const ANSWER = fs.readFileSync('@D@/body.json');

function fromMemory(r) { r.return(200, ANSWER); }
// The file as read, its first line (the end) included.
function readOnly(r) { r.return(200, fs.readFileSync('@D@/answer')); }
function readAndEnd(r) {
    const file = fs.readFileSync('@D@/answer');
    const newline = file.indexOf(10);
    if (Number(file.slice(0, newline).toString()) <= Date.now()) return r.return(500);
    r.return(200, file.slice(newline + 1));
}
function requestIdOnly(r) { r.headersOut['X-Request-Id'] = r.variables.request_id; r.return(200, ANSWER); }

export default { fromMemory, readOnly, readAndEnd, requestIdOnly };
