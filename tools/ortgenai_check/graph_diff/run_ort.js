// Runs a decoder graph in ONNX Runtime (onnxruntime-node, CPU, 2 threads) on one prompt with empty past and writes
// each named output (and logits) as raw float32 OUT/i.bin, i in the order of NAMES.
// usage: NODE_PATH=... node run_ort.js MODEL.onnx NAMES.txt IDS(comma-separated) KV_HEADS HEAD_SIZE OUT
const fs = require('fs');
const ort = require('onnxruntime-node');
const [model, namesFile, idsText, kvHeads, headSize, out] = process.argv.slice(2);
const names = fs.readFileSync(namesFile, 'utf8').trim().split('\n').map(l => l.split('\t')[0]).concat(['logits']);
(async () => {
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: 2, interOpNumThreads: 1 });
  const ids = idsText.split(',').map(BigInt);
  const feeds = {
    input_ids: new ort.Tensor('int64', BigInt64Array.from(ids), [1, ids.length]),
    attention_mask: new ort.Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]),
  };
  const empty = [1, +kvHeads, 0, +headSize];
  for (const n of s.inputNames)
    if (n.startsWith('past_key_values')) feeds[n] = new ort.Tensor('float32', new Float32Array(0), empty);
  const r = await s.run(feeds, names);
  fs.mkdirSync(out, { recursive: true });
  names.forEach((n, i) => {
    const d = r[n].data;
    fs.writeFileSync(`${out}/${i}.bin`, Buffer.from(d.buffer, d.byteOffset, d.byteLength));
  });
})();
