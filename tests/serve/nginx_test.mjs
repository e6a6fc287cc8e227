// Scale-out: two `ogx serve` replicas behind nginx (tests/serve/nginx.conf: least_conn, passive health checks,
// proxy_buffering off), all on loopback, nginx as the current user with its own prefix. Streamed requests through
// nginx complete with the same text as one replica gives directly, both replicas serve, and with one replica
// killed the requests still complete on the other.
// usage: node nginx_test.mjs OGX_BINARY MODEL_DIR [ogx serve arguments]. Prints SKIPPED when nginx is absent.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

import { check, checkEq, failures, raw, sleep, startServer, stopServer } from './lib.mjs';

const [ogx, modelDir, ...serveArgs] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));

function findNginx() {
  for (const p of ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx']) if (fs.existsSync(p)) return p;
  return null;
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function streamText(stream) {
  let text = '', finish = null;
  for await (const chunk of await stream) for (const c of chunk.choices) {
    text += c.text ?? '';
    if (c.finish_reason) finish = c.finish_reason;
  }
  return { text, finish };
}

async function main() {
  const nginx = findNginx();
  if (!nginx) {
    console.log('SKIPPED: nginx is not installed (Debian package nginx-light)');
    return 0;
  }
  const a = await startServer(ogx, modelDir, serveArgs);
  const b = await startServer(ogx, modelDir, serveArgs);
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'ogx-nginx-'));
  const port = await freePort();
  const conf = fs.readFileSync(path.join(here, 'nginx.conf'), 'utf8')
    .replaceAll('@PREFIX@', prefix).replaceAll('@PORT@', String(port))
    .replaceAll('@UPSTREAM_A@', a.url.replace('http://', '')).replaceAll('@UPSTREAM_B@', b.url.replace('http://', ''));
  fs.writeFileSync(path.join(prefix, 'nginx.conf'), conf);
  const args = ['-p', prefix, '-c', path.join(prefix, 'nginx.conf'), '-e', path.join(prefix, 'error.log')];
  const t = spawnSync(nginx, [...args, '-t'], { encoding: 'utf8' });
  if (!check(t.status === 0, 'nginx -t accepts the configuration')) console.log(t.stderr);
  const proc = spawn(nginx, [...args, '-g', 'daemon off;'], { stdio: 'inherit' });
  const url = `http://127.0.0.1:${port}`;
  let up = false;
  for (let i = 0; i < 100 && !up; i++) {
    await sleep(50);
    up = await raw(`${url}/health`, 'GET').then((r) => r.status === 200, () => false);
  }
  check(up, `nginx answers on ${url}`);
  const direct = new OpenAI({ baseURL: `${a.url}/v1`, apiKey: 'x', maxRetries: 0 });
  const proxied = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
  const prompts = ['The package', 'A file', 'The system', 'Free software', 'The kernel', 'A daemon', 'Copyright', 'The shell'];
  const want = [];
  for (const p of prompts)
    want.push((await direct.completions.create({ model: 'm', prompt: p, max_tokens: 12, temperature: 0 })).choices[0].text);

  const got = await Promise.all(prompts.map((p) => proxied.completions.create({ model: 'm', prompt: p, max_tokens: 12,
                                                                              temperature: 0, stream: true }).then(streamText)));
  checkEq(got.map((g) => g.text), want, '8 concurrent streams through nginx equal one replica directly');
  check(got.every((g) => g.finish), 'every stream ended with a finish_reason (and [DONE])');
  const served = async (u) => {
    const m = await raw(`${u}/metrics`, 'GET');
    const x = m.text.match(/ogx_requests_total\{endpoint="\/v1\/completions",status="200"\} (\d+)/);
    return x ? Number(x[1]) : 0;
  };
  const na = await served(a.url) - prompts.length, nb = await served(b.url);  // a also served the direct ones
  check(na > 0 && nb > 0, `both replicas served (least_conn): ${na} and ${nb}`);

  console.log('one replica down: requests go to the other');
  b.proc.kill('SIGKILL');
  await sleep(200);
  const after = await Promise.all(prompts.slice(0, 4).map((p) => proxied.completions.create({
    model: 'm', prompt: p, max_tokens: 12, temperature: 0, stream: true }).then(streamText, (e) => ({ text: `error ${e.status}` }))));
  checkEq(after.map((g) => g.text), want.slice(0, 4), 'streams complete on the remaining replica');

  proc.kill('SIGTERM');
  await stopServer(a);
  fs.rmSync(prefix, { recursive: true, force: true });
  console.log(failures ? `${failures} check(s) FAILED` : 'all checks passed');
  return failures ? 1 : 0;
}

main().then((code) => process.exit(code), (e) => {
  console.error(`FAIL: ${e.stack ?? e}`);
  process.exit(1);
});
