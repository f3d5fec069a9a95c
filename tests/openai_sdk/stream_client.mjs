// The official OpenAI SDK for Node as an outside client of an OpenAI-compatible server
// (tests/e2e/openai_sdk_test.sh runs it against `chaosbench worker llm-serve`).
//
// It lists the models; then, after one untimed warm-up request, for each endpoint
// (completions, chat) it sends --requests streamed requests one after another, then
// --requests at once, then one cut by max_tokens, timing each with performance.now(): at
// the send, and at every chunk that carries text. The server's /metrics TTFT series is
// read before and after them. Then one non-streamed request per endpoint, and requests the
// server must refuse (unknown model, oversize prompt, streamed or not): the SDK has to
// raise its typed APIError carrying the OpenAI error object.
//
// Prints one JSON line per request on stdout (a failed request's line carries "error");
// judging them is check_sdk_results.py's job.
//
//   node stream_client.mjs --base-url http://127.0.0.1:PORT/v1 --model NAME
//        [--requests 6] [--max-tokens 64] [--short-max-tokens 8] [--oversize-prompt 4096]
//        [--metrics-url http://127.0.0.1:PORT/metrics]
// --oversize-prompt: characters in the prompt the server must refuse as over its context.
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

import OpenAI from 'openai';
import { VERSION as sdkVersion } from 'openai/version';

const { values: opts } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    model: { type: 'string' },
    requests: { type: 'string', default: '6' },
    'max-tokens': { type: 'string', default: '64' },
    'short-max-tokens': { type: 'string', default: '8' },
    'oversize-prompt': { type: 'string', default: '4096' },
    'metrics-url': { type: 'string' },
  },
});
if (!opts['base-url'] || !opts.model) {
  console.error('usage: node stream_client.mjs --base-url URL --model NAME [--requests N] [--max-tokens N]');
  process.exit(2);
}
const requests = Number(opts.requests);
const maxTokens = Number(opts['max-tokens']);
const shortMaxTokens = Number(opts['short-max-tokens']);
const oversize = Number(opts['oversize-prompt']);

const client = new OpenAI({
  baseURL: opts['base-url'],
  apiKey: 'sk-chaosbench-dummy',
  maxRetries: 0, // a refusal must reach the test, not be retried away
  timeout: 20_000,
});

const emit = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);

emit({ kind: 'meta', sdk_version: sdkVersion, node_version: process.version });

// The text a chunk carries: choices[0].text (completions) or choices[0].delta.content (chat).
function chunkText(endpoint, chunk) {
  const choice = chunk.choices?.[0];
  if (!choice) return '';
  return (endpoint === 'chat' ? choice.delta?.content : choice.text) ?? '';
}

function median(xs) {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function streamParams(endpoint, i, max) {
  const common = { model: opts.model, max_tokens: max, stream: true, stream_options: { include_usage: true } };
  if (endpoint === 'chat') return { ...common, messages: [{ role: 'user', content: `request ${i}: say something` }] };
  return { ...common, prompt: `request ${i}: say something` };
}

// One streamed request, timed. Returns its JSON line.
async function streamOnce(endpoint, mode, i, max = maxTokens) {
  const api = endpoint === 'chat' ? client.chat.completions : client.completions;
  const line = { kind: 'stream', endpoint, mode, i, max_tokens: max };
  const sent = performance.now();
  try {
    const stream = await api.create(streamParams(endpoint, i, max));
    const arrivals = [];
    let text = '';
    let events = 0;
    let usage = null;
    let finish = null;
    let id = null;
    for await (const chunk of stream) {
      const now = performance.now();
      events += 1;
      id ??= chunk.id;
      line.object ??= chunk.object;
      const piece = chunkText(endpoint, chunk);
      if (piece.length > 0) {
        arrivals.push(now);
        text += piece;
      }
      const reason = chunk.choices?.[0]?.finish_reason;
      if (reason) finish = reason;
      if (chunk.usage) usage = chunk.usage;
    }
    const gaps = arrivals.slice(1).map((t, k) => t - arrivals[k]);
    Object.assign(line, {
      id,
      ttft_ms: arrivals.length ? arrivals[0] - sent : null,
      e2e_ms: performance.now() - sent,
      itl_ms_median: median(gaps),
      chunks: arrivals.length,
      events,
      finish_reason: finish,
      usage,
      text,
    });
  } catch (err) {
    line.error = `${err?.constructor?.name}: ${err?.message}`;
  }
  return line;
}

// A non-streamed request: the whole answer in one JSON body.
async function wholeOnce(endpoint, max = maxTokens) {
  const line = { kind: 'whole', endpoint, max_tokens: max };
  const sent = performance.now();
  try {
    const base = { model: opts.model, max_tokens: max };
    const answer = endpoint === 'chat'
      ? await client.chat.completions.create({ ...base, messages: [{ role: 'user', content: 'whole answer' }] })
      : await client.completions.create({ ...base, prompt: 'whole answer' });
    const choice = answer.choices?.[0];
    Object.assign(line, {
      e2e_ms: performance.now() - sent,
      object: answer.object,
      id: answer.id,
      finish_reason: choice?.finish_reason ?? null,
      usage: answer.usage ?? null,
      text: (endpoint === 'chat' ? choice?.message?.content : choice?.text) ?? null,
    });
  } catch (err) {
    line.error = `${err?.constructor?.name}: ${err?.message}`;
  }
  return line;
}

// A request the server must refuse: what the SDK raised, field by field.
async function refusedOnce(what, endpoint, stream, params) {
  const line = { kind: 'refused', case: what, endpoint, stream };
  const api = endpoint === 'chat' ? client.chat.completions : client.completions;
  try {
    const answer = await api.create({ ...params, stream });
    if (stream) for await (const _ of answer); // eslint-disable-line no-unused-vars
    line.raised = false;
  } catch (err) {
    Object.assign(line, {
      raised: true,
      class: err?.constructor?.name,
      is_api_error: err instanceof OpenAI.APIError,
      is_bad_request: err instanceof OpenAI.BadRequestError,
      is_not_found: err instanceof OpenAI.NotFoundError,
      status: err?.status ?? null,
      // The OpenAI error object as the SDK read it, and the fields it lifts from it.
      error_object: err?.error ?? null,
      type: err?.type ?? null,
      code: err?.code ?? null,
      param: err?.param ?? null,
      message: err?.message ?? null,
    });
  }
  return line;
}

// The server's TTFT series (vllm:time_to_first_token_seconds, where it has one) around the
// streamed requests: the checker compares its mean over exactly them with the SDK's.
async function scrape(phase) {
  if (!opts['metrics-url']) return;
  try {
    const text = await (await fetch(opts['metrics-url'])).text();
    emit({ kind: 'metrics', phase, lines: text.split('\n').filter((l) => l.startsWith('vllm:time_to_first_token')) });
  } catch (err) {
    emit({ kind: 'metrics', phase, error: String(err) });
  }
}

// GET /v1/models through the SDK's pagination.
try {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  emit({ kind: 'models', ids });
} catch (err) {
  emit({ kind: 'models', error: `${err?.constructor?.name}: ${err?.message}` });
}

// One request first, untimed: the SDK's lazy loading and the first connection are not TTFT.
emit({ ...(await streamOnce('completions', 'warmup', 0, 1)), kind: 'warmup' });
await scrape('before');
for (const endpoint of ['completions', 'chat']) {
  for (let i = 0; i < requests; i++) emit(await streamOnce(endpoint, 'sequential', i));
  const together = await Promise.all(Array.from({ length: requests }, (_, i) => streamOnce(endpoint, 'concurrent', i)));
  together.forEach(emit);
  // max_tokens below the engine's answer length: cut at max_tokens, finish_reason "length".
  emit(await streamOnce(endpoint, 'short', 0, shortMaxTokens));
}
await scrape('after');
for (const endpoint of ['completions', 'chat']) emit(await wholeOnce(endpoint));

const big = 'x'.repeat(oversize);
for (const stream of [false, true]) {
  emit(await refusedOnce('unknown_model', 'completions', stream,
    { model: 'no-such-model', prompt: 'hi', max_tokens: 4 }));
  emit(await refusedOnce('unknown_model', 'chat', stream,
    { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }));
  emit(await refusedOnce('oversize_prompt', 'completions', stream,
    { model: opts.model, prompt: big, max_tokens: 4 }));
  emit(await refusedOnce('oversize_prompt', 'chat', stream,
    { model: opts.model, messages: [{ role: 'user', content: big }], max_tokens: 4 }));
}
