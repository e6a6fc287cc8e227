// Helpers of the `ogx serve` tests: start a server process and wait for its "listening on" line, a chat-template
// copy of a model folder, raw HTTP requests, percentiles, checks.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

export let failures = 0;
export function check(cond, what) {
  if (cond) {
    console.log(`  ok   ${what}`);
  } else {
    failures++;
    console.log(`  FAIL ${what}`);
  }
  return cond;
}
export function checkEq(got, want, what) {
  const ok = JSON.stringify(got) === JSON.stringify(want);
  return check(ok, ok ? what : `${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

// Starts `ogx serve DIR --port 0 ARGS...`; resolves to {url, proc, stderr()} once it prints its address.
export function startServer(ogx, dir, args = [], { timeoutMs = 120000 } = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(ogx, ['serve', dir, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`ogx serve did not start within ${timeoutMs} ms: ${err}`));
    }, timeoutMs);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], proc, stderr: () => err });
      }
    });
    proc.stderr.on('data', (d) => { err += d; });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`ogx serve exited (${code}) before listening: ${err}`));
    });
  });
}

// Stops a server with SIGTERM; resolves to its exit code (SIGKILL after timeoutMs).
export function stopServer(server, timeoutMs = 20000) {
  return new Promise((resolve) => {
    if (server.proc.exitCode !== null) return resolve(server.proc.exitCode);
    const timer = setTimeout(() => server.proc.kill('SIGKILL'), timeoutMs);
    server.proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? signal);
    });
    server.proc.kill('SIGTERM');
  });
}

// A temporary copy of a model folder (links to its files) with a small chat template added.
export const kChatTemplate =
  "{% for m in messages %}{{ '<|' + m['role'] + '|>\\n' + m['content'] + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}";
const madeFolders = [];  // chatFolder's copies, removed when the process exits
process.on('exit', () => {
  for (const d of madeFolders) fs.rmSync(d, { recursive: true, force: true });
});
export function chatFolder(dir) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'ogx-serve-chat-'));
  madeFolders.push(out);
  for (const f of fs.readdirSync(dir)) fs.symlinkSync(path.resolve(dir, f), path.join(out, f));
  fs.writeFileSync(path.join(out, 'chat_template.jinja'), kChatTemplate);
  return out;
}

// A raw HTTP request (fetch), for what the OpenAI client will not send. Resolves to {status, headers, body}.
export async function raw(url, method, body, headers = {}) {
  const res = await fetch(url, { method, body, headers: { 'content-type': 'application/json', ...headers },
                                 signal: AbortSignal.timeout(60000) });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, headers: res.headers, text, json };
}

export function percentile(values, p) {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export async function metric(url, name) {
  const r = await raw(`${url}/metrics`, 'GET');
  const m = r.text.match(new RegExp(`^${name} (\\S+)$`, 'm'));
  return m ? Number(m[1]) : NaN;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// POSTs a streamed request and closes the connection once `events` server-sent events have come (node:http: the
// socket is destroyed, as a client that goes away; an aborted fetch could leave its reader waiting when the whole
// answer had already arrived). Resolves to the number of events read, when the socket is closed.
export function streamAndHangUp(url, body, events, headers = {}) {
  return new Promise((resolve, reject) => {
    let got = 0;
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
                             (res) => {
      res.on('data', (d) => {
        got += (d.toString().match(/^data: /gm) || []).length;
        if (got >= events) req.destroy();
      });
      res.on('end', () => resolve(got));  // the whole answer came first
    });
    req.on('close', () => resolve(got));
    req.on('error', (e) => (got ? resolve(got) : reject(e)));
    req.setTimeout(60000, () => req.destroy(new Error('no answer within 60 s')));
    req.end(body);
  });
}
