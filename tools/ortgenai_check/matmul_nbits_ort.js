// Writes a one-node MatMulNBits model (4-bit, accuracy_level 4, seeded random weights and activations) and runs it
// in ONNX Runtime 1.30.0 (onnxruntime-node, its CPU provider) for the given M: DIR/model.onnx, DIR/a_M.bin (A,
// float32 [M][K], the first M rows of one random matrix), DIR/y_M.bin (ONNX Runtime's Y). matmul_nbits_check.sh runs
// ogx on the same files (matmul_nbits_ogx.cpp).
// usage: NODE_PATH=DIR_WITH_onnxruntime-node node matmul_nbits_ort.js DIR K N BLOCK ZP(0|1) BIAS(0|1) THREADS M1,M2,.. [SEED]
const fs = require('fs');
const ort = require('onnxruntime-node');

// A minimal protobuf writer for the few ONNX messages needed (field numbers from onnx.proto).
function varint(n) {
  const out = [];
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Buffer.from(out);
}
const key = (f, wt) => varint((f << 3) | wt);
const fint = (f, v) => Buffer.concat([key(f, 0), varint(v)]);
const fbytes = (f, b) => { b = Buffer.isBuffer(b) ? b : Buffer.from(b); return Buffer.concat([key(f, 2), varint(b.length), b]); };
const fstr = (f, s) => fbytes(f, Buffer.from(s, 'utf8'));

// TensorProto: dims 1, data_type 2, name 8, raw_data 9. ValueInfoProto: name 1, type 2 (TypeProto.tensor_type 1:
// elem_type 1, shape 2 of dim 1: dim_value 1 | dim_param 2). AttributeProto: name 1, i 3, type 20 (2 = INT).
function tensor(name, dtype, dims, raw) {
  return Buffer.concat([...dims.map(d => fint(1, d)), fint(2, dtype), fstr(8, name), fbytes(9, raw)]);
}
function valueInfo(name, dtype, dims) {
  const dimsB = dims.map(d => fbytes(1, typeof d === 'string' ? fstr(2, d) : fint(1, d)));
  const shape = fbytes(2, Buffer.concat(dimsB));
  const tt = fbytes(1, Buffer.concat([fint(1, dtype), shape]));
  return Buffer.concat([fstr(1, name), fbytes(2, tt)]);
}
const attrInt = (name, v) => Buffer.concat([fstr(1, name), fint(3, v), fint(20, 2)]);

// xorshift32, deterministic
let st = 0;
function rnd() { st ^= st << 13; st >>>= 0; st ^= st >>> 17; st ^= st << 5; st >>>= 0; return st / 4294967296; }

const [dir, K, N, BS, ZP, BIAS, THREADS, Ms, seed] = process.argv.slice(2);
const k = +K, n = +N, bs = +BS, zp = +ZP, bias = +BIAS;
st = (+(seed || 1234567)) >>> 0 || 1;
const nb = Math.ceil(k / bs), blob = bs / 2;  // blocks per column, bytes per block
fs.mkdirSync(dir, { recursive: true });
const B = Buffer.alloc(n * nb * blob);
for (let i = 0; i < B.length; i++) B[i] = Math.floor(rnd() * 256);
const S = new Float32Array(n * nb);
for (let i = 0; i < S.length; i++) S[i] = 0.005 + rnd() * 0.045;
const zb = Math.ceil(nb / 2);
const Z = Buffer.alloc(n * zb);
for (let i = 0; i < Z.length; i++) Z[i] = Math.floor(rnd() * 256);
const Bi = new Float32Array(n);
for (let i = 0; i < n; i++) Bi[i] = rnd() * 2 - 1;

const inits = [tensor('B', 2, [n, nb, blob], B), tensor('scales', 1, [n * nb], Buffer.from(S.buffer))];
const ins = ['A', 'B', 'scales'];
if (zp) { inits.push(tensor('zero_points', 2, [n * zb], Z)); ins.push('zero_points'); }
if (bias) { if (!zp) ins.push(''); ins.push(''); inits.push(tensor('bias', 1, [n], Buffer.from(Bi.buffer))); ins.push('bias'); }
// NodeProto: input 1, output 2, name 3, op_type 4, attribute 5, domain 7. GraphProto: node 1, name 2,
// initializer 5, input 11, output 12. ModelProto: ir_version 1, graph 7, opset_import 8 (domain 1, version 2).
const node = Buffer.concat([...ins.map(s => fstr(1, s)), fstr(2, 'Y'), fstr(3, 'mnb'), fstr(4, 'MatMulNBits'),
  fstr(7, 'com.microsoft'),
  ...[['K', k], ['N', n], ['bits', 4], ['block_size', bs], ['accuracy_level', 4]].map(([a, v]) => fbytes(5, attrInt(a, v)))]);
const graph = Buffer.concat([fbytes(1, node), fstr(2, 'g'), ...inits.map(t => fbytes(5, t)),
  fbytes(11, valueInfo('A', 1, ['M', k])), fbytes(12, valueInfo('Y', 1, ['M', n]))]);
const model = Buffer.concat([fint(1, 8), fbytes(8, Buffer.concat([fstr(1, ''), fint(2, 17)])),
  fbytes(8, Buffer.concat([fstr(1, 'com.microsoft'), fint(2, 1)])), fbytes(7, graph)]);
fs.writeFileSync(dir + '/model.onnx', model);

(async () => {
  const sess = await ort.InferenceSession.create(dir + '/model.onnx',
    { intraOpNumThreads: +THREADS, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
  const ms = Ms.split(',').map(Number);
  const AA = new Float32Array(Math.max(...ms) * k);
  for (let i = 0; i < AA.length; i++) AA[i] = (rnd() * 2 - 1) * (1 + 3 * rnd());
  for (const m of ms) {
    const A = AA.slice(0, m * k);
    fs.writeFileSync(`${dir}/a_${m}.bin`, Buffer.from(A.buffer));
    const r = await sess.run({ A: new ort.Tensor('float32', A, [m, k]) });
    fs.writeFileSync(`${dir}/y_${m}.bin`, Buffer.from(r.Y.data.buffer, r.Y.data.byteOffset, r.Y.data.byteLength));
  }
})();
