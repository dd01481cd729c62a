#!/usr/bin/env node
// Shows that check-wax.mjs can fail: tampers with one field in each of a few transaction
// vectors (an id, a digest, a packed byte, a recovered key, what hived's validation does with
// two faults), runs check-wax.mjs on the result and requires a non-zero exit, each tampered
// vector reported with its field, and no other vector failing.
//
//   node check-wax-detects.mjs VECTORS SCRATCH   (SCRATCH: where the tampered copy goes)
import fs from 'fs';
import path from 'path';
import { spawnSync } from 'child_process';
import { fileURLToPath } from 'url';

const [vectorsPath, scratchPath] = process.argv.slice(2);
if (!vectorsPath || !scratchPath) {
  console.log('usage: check-wax-detects.mjs VECTORS SCRATCH');
  process.exit(2);
}

const flipHex = (s, at) => s.slice(0, at) + (s[at] === '0' ? '1' : '0') + s.slice(at + 1);

// vector name -> [what is changed, the field check-wax.mjs must name]
const TAMPERINGS = {
  transfer_hive: [(r) => { r.id = flipHex(r.id, r.id.length - 1); }, 'transaction id (wax legacy_id)'],
  generated_mix_000: [(r) => { r.sig_digest = flipHex(r.sig_digest, 0); }, 'signature digest (wax legacy_sigDigest)'],
  custom_json_posting: [(r) => { r.hex = flipHex(r.hex, 40); }, 'packed signed transaction (wax legacy packing)'],
  generated_vote_smallest: [(r) => { r.recovered = [r.recovered[0].replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))]; },
    'recovered signer keys (wax legacy_signatureKeys)'],
  'fault_invalid-json': [(r) => { r.hived_validate = 'pass'; }, 'wax validate() passes it'],
  fault_expired: [(r) => { r.hived_validate = 'reject'; }, 'wax validate() refuses it'],
};

const lines = fs.readFileSync(vectorsPath, 'utf8').split('\n').filter(Boolean);
const found = new Set();
const out = lines.map((line) => {
  const rec = JSON.parse(line);
  const t = rec.kind === 'tx' && TAMPERINGS[rec.name];
  if (!t) return line;
  t[0](rec);
  found.add(rec.name);
  return JSON.stringify(rec);
});
fs.writeFileSync(scratchPath, `${out.join('\n')}\n`);

const problems = [];
for (const name of Object.keys(TAMPERINGS)) if (!found.has(name)) problems.push(`no vector "tx ${name}" to tamper with`);

const checker = path.join(path.dirname(fileURLToPath(import.meta.url)), 'check-wax.mjs');
const run = spawnSync(process.execPath, [checker, scratchPath], { encoding: 'utf8' });
const text = run.stdout || '';
if (run.status === 0) problems.push('check-wax.mjs exited 0 on tampered vectors');
// Each failing vector's block: from its FAIL line to the next line that does not start with a space.
const blocks = {};
let current = null;
for (const l of text.split('\n')) {
  const m = /^FAIL (.*)$/.exec(l);
  if (m) blocks[(current = m[1])] = [];
  else if (current && l.startsWith(' ')) blocks[current].push(l);
  else current = null;
}
for (const [name, [, field]] of Object.entries(TAMPERINGS)) {
  const b = blocks[`tx ${name}`];
  if (!b) problems.push(`tx ${name}: tampered, but not reported`);
  else if (!b.some((l) => l.includes(field))) problems.push(`tx ${name}: reported without naming "${field}":\n${b.join('\n')}`);
}
for (const label of Object.keys(blocks)) {
  if (!(label.replace(/^tx /, '') in TAMPERINGS)) problems.push(`${label}: failed, though nothing in it was changed:\n${blocks[label].join('\n')}`);
}

if (problems.length > 0) {
  console.log(`check-wax-detects: ${problems.length} problem(s):`);
  for (const p of problems) console.log(`  ${p}`);
  console.log(`check-wax.mjs said (exit ${run.status}):\n${text}${run.stderr || ''}`);
  process.exit(1);
}
console.log(`check-wax-detects: check-wax.mjs exited ${run.status} and reported each of the ${found.size} tampered vectors with its field, and no other`);
