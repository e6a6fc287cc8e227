// `ogx serve` with the official OpenAI client (npm openai, pinned in package.json): completions and chat,
// streamed and not; response_format (json_schema, json_object) and penalties; 16 concurrent greedy requests each equal to the same request alone; bad requests answered 4xx
// with OpenAI's error body and the server still answering; a client gone mid-stream; a full queue (429); the API
// key (401); a bounded load test (clients x requests) printing p50/p99 latency and tokens/s with nothing lost;
// graceful shutdown on SIGTERM.
// usage: node openai_client_test.mjs OGX_BINARY MODEL_DIR [--light] [ogx serve arguments, e.g. --provider dml ...]
// --light: fewer tokens per request and a smaller load (a slow provider such as lavapipe). Exit 0 when every check
// passed.
import OpenAI from 'openai';

import { chatFolder, check, checkEq, failures, metric, percentile, raw, sleep, startServer, stopServer,
         streamAndHangUp } from './lib.mjs';

const [ogx, modelDir, ...rest] = process.argv.slice(2);
const light = rest[0] === '--light';
const serveArgs = light ? rest.slice(1) : rest;
const concurrentTokens = light ? 6 : 16;  // max_tokens of the 16 concurrent requests
if (!ogx || !modelDir) {
  console.error('usage: node openai_client_test.mjs OGX_BINARY MODEL_DIR [serve arguments]');
  process.exit(2);
}
const t0 = Date.now();
const log = (s) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${s}`);

const prompts = [
  'The Debian package manager', 'A shell script', 'The kernel', 'Free software', 'In the beginning',
  'The configuration file', 'To install a package', 'The manual page', 'A library', 'The compiler',
  'Copyright', 'The network', 'Users and groups', 'The file system', 'A daemon', 'The source code',
];

async function textOf(client, prompt, maxTokens, extra = {}) {
  const r = await client.completions.create({ model: 'm', prompt, max_tokens: maxTokens, temperature: 0, ...extra });
  return r;
}

async function streamText(stream) {
  let text = '', finish = null, chunks = 0, usage = null;
  for await (const chunk of await stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      text += c.text ?? c.delta?.content ?? '';
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  return { text, finish, chunks, usage };
}

async function main() {
  const folder = chatFolder(modelDir);  // the model with a chat template added
  const server = await startServer(ogx, folder, ['--max-queue', '32', ...serveArgs]);
  log(`server at ${server.url}`);
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120000 });

  console.log('models');
  const models = await client.models.list();
  check(models.data.length === 1 && typeof models.data[0].id === 'string', `GET /v1/models lists one model (${models.data[0]?.id})`);

  console.log('completions');
  const one = await textOf(client, prompts[0], 12);
  check(one.object === 'text_completion' && one.choices.length === 1, 'a text_completion with one choice');
  check(one.choices[0].text.length > 0, `text: ${JSON.stringify(one.choices[0].text)}`);
  check(['stop', 'length'].includes(one.choices[0].finish_reason), `finish_reason ${one.choices[0].finish_reason}`);
  check(one.usage.prompt_tokens > 0 && one.usage.completion_tokens > 0 && one.usage.completion_tokens <= 12 &&
        one.usage.total_tokens === one.usage.prompt_tokens + one.usage.completion_tokens, `usage ${JSON.stringify(one.usage)}`);
  const again = await textOf(client, prompts[0], 12);
  checkEq(again.choices[0].text, one.choices[0].text, 'greedy is deterministic');
  const streamed = await streamText(await client.completions.create({
    model: 'm', prompt: prompts[0], max_tokens: 12, temperature: 0, stream: true, stream_options: { include_usage: true } }));
  checkEq(streamed.text, one.choices[0].text, 'streamed text equals the whole answer');
  checkEq(streamed.finish, one.choices[0].finish_reason, 'streamed finish_reason');
  checkEq(streamed.usage?.completion_tokens, one.usage.completion_tokens, 'stream_options.include_usage counts');
  const cut = one.choices[0].text.slice(3, 6);
  if (cut.trim().length > 0) {
    const stopped = await textOf(client, prompts[0], 12, { stop: [cut] });
    const want = one.choices[0].text.slice(0, one.choices[0].text.indexOf(cut));
    checkEq(stopped.choices[0].text, want, `stop ${JSON.stringify(cut)}: text ends before it`);
    checkEq(stopped.choices[0].finish_reason, 'stop', 'stop string: finish_reason stop');
  }
  const sampled = await client.completions.create({ model: 'm', prompt: prompts[1], max_tokens: 10, temperature: 0.9,
                                                    top_p: 0.9, top_k: 20, seed: 42, n: 3 });
  const sampled2 = await client.completions.create({ model: 'm', prompt: prompts[1], max_tokens: 10, temperature: 0.9,
                                                     top_p: 0.9, top_k: 20, seed: 42, n: 3 });
  checkEq(sampled.choices.map((c) => c.index), [0, 1, 2], 'n = 3 gives three choices');
  checkEq(sampled2.choices.map((c) => c.text), sampled.choices.map((c) => c.text), 'sampling with a seed repeats');
  const ids = await client.completions.create({ model: 'm', prompt: [1, 450, 1619], max_tokens: 4, temperature: 0 });
  check(ids.usage.prompt_tokens === 3, 'a prompt of token ids');

  console.log('chat');
  const messages = [{ role: 'system', content: 'You answer briefly.' }, { role: 'user', content: 'What is a package?' }];
  const chat = await client.chat.completions.create({ model: 'm', messages, max_tokens: 12, temperature: 0 });
  check(chat.object === 'chat.completion' && chat.choices[0].message.role === 'assistant', 'a chat.completion from the assistant');
  check(chat.choices[0].message.content.length > 0, `content: ${JSON.stringify(chat.choices[0].message.content)}`);
  const chatStream = await streamText(await client.chat.completions.create({ model: 'm', messages, max_tokens: 12,
                                                                            temperature: 0, stream: true }));
  checkEq(chatStream.text, chat.choices[0].message.content, 'streamed chat equals the whole answer');
  checkEq(chatStream.finish, chat.choices[0].finish_reason, 'streamed chat finish_reason');

  console.log('structured output (response_format) and penalties');
  const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 10 }, size: { type: 'integer', minimum: 0, maximum: 99 } },
                   required: ['name', 'size'], additionalProperties: false };
  const structured = await client.chat.completions.create({ model: 'm', messages, max_tokens: 120, temperature: 0,
    response_format: { type: 'json_schema', json_schema: { name: 'pkg', schema, strict: true } } });
  let value = null;
  try { value = JSON.parse(structured.choices[0].message.content); } catch { /* checked below */ }
  check(value !== null && Object.keys(value).join() === 'name,size' && typeof value.name === 'string' &&
        value.name.length <= 10 && Number.isInteger(value.size) && value.size >= 0 && value.size <= 99,
        `json_schema: ${JSON.stringify(structured.choices[0].message.content)}`);
  const object = await streamText(await client.completions.create({ model: 'm', prompt: prompts[2], max_tokens: 120,
    temperature: 0, stream: true, response_format: { type: 'json_object' } }));
  let parsed = null;
  try { parsed = JSON.parse(object.text); } catch { /* checked below */ }
  check(parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed), `json_object, streamed: ${JSON.stringify(object.text)}`);
  const penalized = await textOf(client, prompts[0], 12, { frequency_penalty: 2, presence_penalty: 1 });
  check(penalized.choices[0].text !== one.choices[0].text, `penalties change the greedy text: ${JSON.stringify(penalized.choices[0].text)}`);

  console.log('16 concurrent greedy requests, each equal to the same request alone');
  const alone = [];
  for (const p of prompts) alone.push((await textOf(client, p, concurrentTokens)).choices[0].text);
  const together = await Promise.all(prompts.map((p, i) => (i % 2
    ? streamText(client.completions.create({ model: 'm', prompt: p, max_tokens: concurrentTokens, temperature: 0,
                                            stream: true }))
    : textOf(client, p, concurrentTokens).then((r) => ({ text: r.choices[0].text })))));
  checkEq(together.map((r) => r.text), alone, '16 concurrent (half streamed) equal 16 alone');

  console.log('bad requests: 4xx with an OpenAI error body, and the server keeps answering');
  const url = server.url;
  const bad = [
    ['bad JSON', '/v1/completions', '{"prompt": "x",', 400, null],
    ['not an object', '/v1/completions', '[1, 2]', 400, null],
    ['wrong type', '/v1/completions', '{"prompt": "x", "max_tokens": "five"}', 400, 'max_tokens'],
    ['negative max_tokens', '/v1/completions', '{"prompt": "x", "max_tokens": -3}', 400, 'max_tokens'],
    ['huge max_tokens', '/v1/completions', '{"prompt": "x", "max_tokens": 100000000}', 400, 'max_tokens'],
    ['prompt longer than the context', '/v1/completions', JSON.stringify({ prompt: 'word '.repeat(3000) }), 400, 'prompt'],
    ['unknown field', '/v1/completions', '{"prompt": "x", "frobnicate": true}', 400, 'frobnicate'],
    ['penalty out of range', '/v1/completions', '{"prompt": "x", "presence_penalty": 3}', 400, 'presence_penalty'],
    ['unknown response_format', '/v1/completions', '{"prompt": "x", "response_format": {"type": "xml"}}', 400, 'response_format.type'],
    ['schema guidance refuses', '/v1/chat/completions', '{"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": {"type": "object", "not": {}}}}}', 400, 'response_format'],
    ['token id outside the vocabulary', '/v1/completions', '{"prompt": [1, 99999999]}', 400, 'prompt'],
    ['chat without messages', '/v1/chat/completions', '{"model": "m"}', 400, 'messages'],
    ['chat with a bad role', '/v1/chat/completions', '{"messages": [{"role": "wizard", "content": "x"}]}', 400, 'messages[0].role'],
  ];
  for (const [what, path, body, status, param] of bad) {
    const r = await raw(`${url}${path}`, 'POST', body);
    check(r.status === status && r.json?.error?.message && r.json.error.type && (param === null || r.json.error.param === param),
          `${what}: ${r.status} ${r.json?.error?.param ?? ''} ${JSON.stringify(r.json?.error?.message ?? r.text).slice(0, 90)}`);
  }
  const notFound = await raw(`${url}/v1/nothing`, 'GET');
  check(notFound.status === 404 && notFound.json?.error, `unknown path: ${notFound.status}`);
  const big = await raw(`${url}/v1/completions`, 'POST', JSON.stringify({ prompt: 'x'.repeat(2 << 20) }));
  check(big.status === 413 && big.json?.error, `a 2 MiB body: ${big.status}`);
  const hugeHeader = await raw(`${url}/v1/completions`, 'POST', '{"prompt": "x", "max_tokens": 1}', { 'x-pad': 'y'.repeat(20000) }).catch((e) => ({ status: `refused (${e.cause?.code ?? e.message})` }));
  check(hugeHeader.status !== 200, `a 20 kB header: ${hugeHeader.status}`);
  try {
    await client.completions.create({ model: 'm', prompt: 'x', max_tokens: -1 });
    check(false, 'the OpenAI client raises BadRequestError');
  } catch (e) {
    check(e instanceof OpenAI.BadRequestError && e.status === 400, `the OpenAI client raises ${e.constructor.name} ${e.status}`);
  }
  const after = await textOf(client, prompts[0], 12);
  checkEq(after.choices[0].text, one.choices[0].text, 'still answering, with the same tokens');
  const health = await raw(`${url}/health`, 'GET');
  checkEq(health.status, 200, 'GET /health');

  console.log('a client that disconnects mid-stream frees its request');
  const got = await streamAndHangUp(`${server.url}/v1/completions`,
                                    JSON.stringify({ prompt: prompts[2], max_tokens: 400, temperature: 0, stream: true }), 3);
  log(`  hung up after ${got} events`);
  let running = NaN;
  for (let i = 0; i < 50; i++) {
    await sleep(100);
    running = await metric(url, 'ogx_running_requests');
    if (running === 0) break;
  }
  checkEq(running, 0, 'no request left running after the client went');

  console.log('load: clients x requests, streamed');
  const clients = 4, perClient = light ? 2 : 4, maxTokens = 8;
  const latencies = [], ttfts = [];
  let tokens = 0, completed = 0;
  const started = Date.now();
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    for (let k = 0; k < perClient; k++) {
      const t = Date.now();
      let first = 0;
      const s = await client.completions.create({ model: 'm', prompt: prompts[(c * perClient + k) % prompts.length],
                                                 max_tokens: maxTokens, temperature: 0.7, seed: k, stream: true,
                                                 stream_options: { include_usage: true } });
      let finish = null, usage = null;
      for await (const chunk of s) {
        if (!first && chunk.choices.some((x) => x.text)) first = Date.now();
        for (const x of chunk.choices) if (x.finish_reason) finish = x.finish_reason;
        if (chunk.usage) usage = chunk.usage;
      }
      if (finish && usage) {
        completed++;
        tokens += usage.completion_tokens;
      }
      latencies.push(Date.now() - t);
      ttfts.push((first || Date.now()) - t);
    }
  }));
  const seconds = (Date.now() - started) / 1000;
  console.log(`  load: ${clients} clients x ${perClient} requests, max_tokens ${maxTokens}: ${completed} completed, ` +
              `latency p50 ${percentile(latencies, 50)} ms p99 ${percentile(latencies, 99)} ms, ` +
              `TTFT p50 ${percentile(ttfts, 50)} ms p99 ${percentile(ttfts, 99)} ms, ` +
              `${tokens} tokens in ${seconds.toFixed(2)} s = ${(tokens / seconds).toFixed(1)} tokens/s`);
  checkEq(completed, clients * perClient, 'nothing lost under load');
  const m = await raw(`${url}/metrics`, 'GET');
  check(/ogx_time_to_first_token_seconds_count \d+/.test(m.text) && /ogx_requests_total\{endpoint="\/v1\/completions",status="200"\}/.test(m.text),
        'GET /metrics has TTFT and request counts');

  console.log('graceful shutdown on SIGTERM');
  const inflight = streamText(client.completions.create({ model: 'm', prompt: prompts[3], max_tokens: light ? 8 : 24,
                                                         temperature: 0, stream: true }))
    .catch((e) => ({ error: e.message }));
  await sleep(50);
  const code = await stopServer(server);
  const last = await inflight;
  check(last.finish === 'stop' || last.finish === 'length',
        `the in-flight stream finished (finish_reason ${last.finish ?? last.error})`);
  checkEq(code, 0, 'the server exited 0');

  console.log('limits: API key, full queue, a folder without a chat template');
  const strict = await startServer(ogx, modelDir, ['--api-key', 'sekret', '--max-batch', '1', '--max-queue', '0', ...serveArgs]);
  const noKey = await raw(`${strict.url}/v1/models`, 'GET');
  check(noKey.status === 401 && noKey.json?.error?.type === 'authentication_error', `no API key: ${noKey.status}`);
  const wrongKey = await raw(`${strict.url}/v1/models`, 'GET', undefined, { authorization: 'Bearer nope' });
  checkEq(wrongKey.status, 401, 'a wrong API key: 401');
  const keyed = new OpenAI({ baseURL: `${strict.url}/v1`, apiKey: 'sekret', maxRetries: 0 });
  const ok = await keyed.completions.create({ model: 'm', prompt: prompts[0], max_tokens: 4, temperature: 0 });
  check(ok.choices[0].text !== undefined, 'the right API key is served');
  const noTemplate = await raw(`${strict.url}/v1/chat/completions`, 'POST', JSON.stringify({ messages }), { authorization: 'Bearer sekret' });
  check(noTemplate.status === 400 && /chat template/.test(noTemplate.json?.error?.message), `no chat template: ${noTemplate.status} ${noTemplate.json?.error?.message}`);
  // One place (--max-batch 1, --max-queue 0), held by a streamed request: another request is refused with 429. The
  // hog can end (EOS, or its 300 tokens: ~0.2 s on this model) before the probe is served on a loaded machine, which
  // frees the place: a 200 is then no verdict, and the pair is tried again (up to 5 times).
  let full;
  for (let attempt = 0; attempt < 5; attempt++) {
    const hogStream = await keyed.completions.create({ model: 'm', prompt: prompts[4], max_tokens: 300, temperature: 0, stream: true });
    const it = hogStream[Symbol.asyncIterator]();
    await it.next();  // it holds the one place
    full = await raw(`${strict.url}/v1/completions`, 'POST', JSON.stringify({ prompt: 'x', max_tokens: 2 }), { authorization: 'Bearer sekret' });
    hogStream.controller.abort();
    await sleep(300);
    if (full.status !== 200) break;
  }
  check(full.status === 429 && full.headers.get('retry-after') && full.json?.error?.type === 'rate_limit_error',
        `a full queue: ${full.status}, Retry-After ${full.headers.get('retry-after')}`);
  const health2 = await raw(`${strict.url}/health`, 'GET');
  checkEq(health2.status, 200, '/health needs no key');
  checkEq(await stopServer(strict), 0, 'the second server exited 0');

  log(failures ? `${failures} check(s) FAILED` : 'all checks passed');
  process.exit(failures ? 1 : 0);
}

main().catch((e) => {
  console.error(`FAIL: ${e.stack ?? e}`);
  process.exit(1);
});
