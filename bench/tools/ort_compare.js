// ort_compare.js — runs an ONNX model with ONNX Runtime (onnxruntime-node,
// CPU) on a .npy input and compares its first output with a .npy file
// (e.g. what `dmlc run` wrote for the same input).
//   node bench/tools/ort_compare.js MODEL.onnx INPUT.npy EXPECTED.npy [tolerance]
// Prints one JSON line {"max_abs_diff":..,"elements":..,"ok":..}; exits 1
// when a difference exceeds the tolerance (default 1e-5) or shapes differ.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, '..', 'node_modules', 'onnxruntime-node'));

// Minimal .npy reader: little-endian float32, C order.
function readNpy(p) {
  const buf = fs.readFileSync(p);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(p + ': not .npy');
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const off = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', off, off + hlen);
  if (!/'descr': '<f4'/.test(header) || /'fortran_order': True/.test(header))
    throw new Error(p + ': expected little-endian float32 C order');
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',')
      .map((s) => s.trim()).filter((s) => s.length).map(Number);
  const start = off + hlen;
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length));
  return {shape, data};
}

async function main() {
  const [model, input, expected, tolArg] = process.argv.slice(2);
  if (!expected) throw new Error('usage: ort_compare.js MODEL.onnx INPUT.npy EXPECTED.npy [tol]');
  const tol = Number(tolArg || 1e-5);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: 1, graphOptimizationLevel: 'all'});
  const x = readNpy(input), want = readNpy(expected);
  const out = await session.run({[session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape)});
  const got = out[session.outputNames[0]];
  const sameShape = got.dims.length === want.shape.length &&
      got.dims.every((d, i) => Number(d) === want.shape[i]);
  let maxDiff = 0;
  if (sameShape)
    for (let i = 0; i < want.data.length; i++)
      maxDiff = Math.max(maxDiff, Math.abs(got.data[i] - want.data[i]));
  const ok = sameShape && maxDiff <= tol;
  console.log(JSON.stringify({max_abs_diff: maxDiff, elements: want.data.length,
                              shape: Array.from(got.dims, Number), ok}));
  process.exit(ok ? 0 : 1);
}
main().catch((e) => { console.error('error: ort_compare: ' + e.message); process.exit(1); });
