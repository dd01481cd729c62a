#!/usr/bin/env node
// Checks the transaction vectors printed by apiary_conformance_vectors (one JSON object per
// line, from stdin or the file named as the first argument) against wax (@hiveio/wax, pinned
// in package.json / package-lock.json): Hive's own protocol code, hived's, compiled to
// WebAssembly. check.js holds the same vectors to dhive, a client library written apart from
// hived; this one holds them to hived's serializer, hashing, key recovery and validation.
//
// Each "tx" vector's Hive legacy JSON is turned into the HF26 API form here (assets as
// {amount, precision, nai}, operations as {type: "<name>_operation", value}) and read by
// createTransactionFromJson; then wax's legacy packing, legacy_id, legacy_sigDigest and
// legacy_signatureKeys must equal apiary's bytes, id, digest and recovered keys, and its
// validate() (hived's checks of the operations' own fields) must pass or refuse the
// transaction as the vector says. The HF26 form's bytes must differ from the legacy ones in
// the asset symbols alone.
//
// Prints every mismatch naming the vector and the field, then "N passed, N failed"; exits
// non-zero on any failure, or when no transaction vectors were read.
import fs from 'fs';
import nodeCrypto from 'crypto';
import { createRequire } from 'module';

const require = createRequire(import.meta.url);
const EXPECTED_WAX_VERSION = '2.0.2';

let wax;
let waxVersion;
try {
  wax = await import('@hiveio/wax');
  waxVersion = require('@hiveio/wax/package.json').version;
} catch (e) {
  process.stderr.write(
    'conformance: cannot load Hive\'s protocol code @hiveio/wax from tests/conformance/node_modules:\n' +
    `  ${String(e.message).split('\n')[0]}\n` +
    'Run scripts/install-deps.sh (it runs "npm ci --ignore-scripts" in tests/conformance), then run the test again.\n');
  process.exit(2);
}

const verbose = process.argv.includes('--verbose') || process.argv.includes('-v');
const inputPath = process.argv.slice(2).find((a) => !a.startsWith('-'));

const sha256 = (b) => nodeCrypto.createHash('sha256').update(b).digest();
const clip = (s, n = 200) => (s.length > n ? `${s.slice(0, n)}... (${s.length} chars)` : s);

// One wax instance per chain id, the vectors' own.
const foundations = new Map();
async function foundationFor(chainId) {
  if (!foundations.has(chainId)) foundations.set(chainId, await wax.createWaxFoundation({ chainId }));
  return foundations.get(chainId);
}

// wax's errors carry hived's exception as JSON: its messages, one line.
function waxMessage(e) {
  try {
    const fc = JSON.parse(e.message);
    return fc.stack.map((s) => s.format).filter(Boolean).join('; ') || fc.message;
  } catch {
    return String(e && e.message).split('\n')[0];
  }
}

// ---- reporting -------------------------------------------------------------------------------

let passed = 0;
let failed = 0;
let comparisons = 0;

class Vector {
  constructor(label) {
    this.label = label;
    this.problems = [];
    this.notes = [];
  }
  eq(what, ours, theirs, locate) {
    comparisons++;
    if (ours === theirs) return true;
    let d = `  ${what}: apiary differs from wax\n      apiary: ${clip(JSON.stringify(ours))}\n      wax:    ${clip(JSON.stringify(theirs))}`;
    if (typeof ours === 'string' && typeof theirs === 'string') {
      let i = 0;
      while (i < ours.length && i < theirs.length && ours[i] === theirs[i]) i++;
      d += locate ? `\n      first difference at byte ${i >> 1}: in ${locate(i >> 1)}` : `\n      first difference at character ${i}`;
    }
    this.problems.push(d);
    return false;
  }
  ok(what, cond, detail) {
    comparisons++;
    if (!cond) this.problems.push(`  ${what}${detail ? `: ${detail}` : ''}`);
    return !!cond;
  }
  fail(what, detail) {
    this.ok(what, false, detail);
  }
  guard(what, fn) {
    try {
      return fn();
    } catch (e) {
      this.fail(what, `wax threw: ${clip(waxMessage(e), 300)}`);
      return undefined;
    }
  }
  finish() {
    if (this.problems.length === 0) {
      passed++;
      if (verbose) console.log(`ok   ${this.label}${this.notes.length ? ` (${this.notes.join('; ')})` : ''}`);
    } else {
      failed++;
      console.log(`FAIL ${this.label}`);
      for (const p of this.problems.slice(0, 25)) console.log(p);
      if (this.problems.length > 25) console.log(`  ... and ${this.problems.length - 25} more`);
    }
  }
}

// ---- Hive legacy JSON to the HF26 API form ---------------------------------------------------

// The fields that hold assets, by operation, and comment_options' extensions by variant index
// (hived's static_variant order): what the legacy form writes differently.
const ASSET_FIELDS = { transfer: ['amount'], comment_options: ['max_accepted_payout'] };
const COMMENT_OPTIONS_EXTENSIONS = ['comment_payout_beneficiaries'];

// "1.000 HIVE" -> {amount: "1000", precision: 3, nai: "@@000000021"}, with wax's own NAIs.
function naiAsset(w, text) {
  const m = /^(-?)(\d+)\.(\d+) ([A-Z]+)$/.exec(text);
  const known = m && w.ASSETS[m[4]];
  if (!known || m[3].length !== known.precision) throw new Error(`${JSON.stringify(text)} is not a HIVE or HBD amount`);
  return { amount: (BigInt(m[1] + m[2] + m[3])).toString(), precision: known.precision, nai: known.nai };
}

function hf26Operation(w, [name, body]) {
  const value = { ...body };
  for (const f of ASSET_FIELDS[name] || []) value[f] = naiAsset(w, body[f]);
  if (name === 'comment_options') {
    value.extensions = body.extensions.map(([index, ext]) => {
      if (!(index in COMMENT_OPTIONS_EXTENSIONS)) throw new Error(`comment_options extension ${index} is unknown`);
      return { type: COMMENT_OPTIONS_EXTENSIONS[index], value: ext };
    });
  }
  return { type: `${name}_operation`, value };
}

const hf26Transaction = (w, tx) => ({ ...tx, operations: tx.operations.map((op) => hf26Operation(w, op)) });

// ---- wax's binary views ----------------------------------------------------------------------

// The scalar nodes of a binary view, with their paths: [path, offset, size].
function leaves(nodes, prefix = '', out = []) {
  for (const n of nodes) {
    const path = prefix ? `${prefix}.${n.key}` : n.key;
    if (n.children && n.children.length) leaves(n.children, path, out);
    else if (n.type === 'scalar') out.push([path, n.offset, n.size]);
  }
  return out;
}

// "operations.0.value.memo, byte 3 of its 16" for a byte offset of a binary view.
function locatorOf(view) {
  const ls = leaves(view.offsets);
  return (off) => {
    const l = ls.find(([, o, s]) => off >= o && off < o + s);
    return l ? `${l[0]}, byte ${off - l[1]} of its ${l[2]}` : 'a length or count, or past the end';
  };
}

const isAssetSymbol = (path) => /(^|\.)(amount|max_accepted_payout)\.symbol$/.test(path);

// The legacy bytes with each asset's 8-byte legacy symbol replaced by the HF26 form's 4-byte
// asset number: what the HF26 bytes must be when the forms differ in the symbols alone.
function legacyWithNaiSymbols(legacy, hf26) {
  const l = leaves(legacy.offsets);
  const h = leaves(hf26.offsets);
  if (l.length !== h.length || l.some(([p], i) => p !== h[i][0])) return null;
  let out = legacy.binary;
  for (let i = l.length - 1; i >= 0; i--) {
    if (!isAssetSymbol(l[i][0])) continue;
    const [, lo, ls] = l[i];
    const [, ho, hs] = h[i];
    out = out.slice(0, 2 * lo) + hf26.binary.slice(2 * ho, 2 * (ho + hs)) + out.slice(2 * (lo + ls));
  }
  return { bytes: out, assets: l.filter(([p]) => isAssetSymbol(p)).length };
}

// ---- one transaction -------------------------------------------------------------------------

// fc's time parser, compiled for 32-bit WebAssembly, overflows after this second (2^31 - 1).
const LAST_WAX_TIME = '2038-01-19T03:14:07';

const stats = { checked: 0, unreadable: [], withAssets: 0, sameHf26Id: 0, validatePass: 0, validateReject: 0,
  generated: {}, faults: [] };

async function checkTx(v, rec) {
  let legacyJson;
  try {
    legacyJson = JSON.parse(rec.json);
  } catch (e) {
    v.fail('json', `is not valid JSON: ${e.message}`);
    return;
  }
  if (!v.ok('chain_id', /^[0-9a-f]{64}$/.test(rec.chain_id || ''), 'missing or not 32 bytes of hex')) return;
  const w = await foundationFor(rec.chain_id);
  v.eq('chain id wax was created with', rec.chain_id, w.chainId);

  const api = v.guard('legacy JSON to the HF26 API form', () => hf26Transaction(w, legacyJson));
  if (!api) return;
  let tx;
  try {
    tx = w.createTransactionFromJson(api);
  } catch (e) {
    const msg = waxMessage(e);
    if (legacyJson.expiration > LAST_WAX_TIME && /Datetime overflow/.test(msg)) {
      stats.unreadable.push(rec.name);
      v.notes.push(`not read: wax's time parser overflows at expiration ${legacyJson.expiration}`);
      return;
    }
    v.fail('wax createTransactionFromJson (HF26 form of apiary\'s JSON)', `threw: ${clip(msg, 300)}`);
    return;
  }
  stats.checked++;

  // Packing, id, digest and keys: legacy serialization, as apiary packs.
  const legacy = v.guard('wax legacy_binaryViewMetadata', () => tx.legacy_binaryViewMetadata);
  if (legacy) v.eq('packed signed transaction (wax legacy packing)', rec.hex, legacy.binary, locatorOf(legacy));
  v.eq('transaction id (wax legacy_id)', rec.id, v.guard('legacy_id', () => tx.legacy_id));
  v.eq('signature digest (wax legacy_sigDigest)', rec.sig_digest, v.guard('legacy_sigDigest', () => tx.legacy_sigDigest));
  const keys = v.guard('legacy_signatureKeys', () => tx.legacy_signatureKeys);
  if (keys) {
    v.eq('recovered signer keys (wax legacy_signatureKeys)', JSON.stringify(rec.recovered), JSON.stringify(keys));
    v.eq('signers\' public keys (wax legacy_signatureKeys)', JSON.stringify(rec.signer_public_keys), JSON.stringify(keys));
  }

  // HF26: the same transaction but for the asset symbols (NAI numbers), so another id and
  // digest exactly when it holds an asset.
  const hf26 = v.guard('wax binaryViewMetadata (HF26)', () => tx.binaryViewMetadata);
  if (legacy && hf26) {
    const swapped = legacyWithNaiSymbols(legacy, hf26);
    if (v.ok('HF26 and legacy binary views have the same fields', swapped !== null)) {
      v.eq('legacy bytes with NAI asset symbols (HF26 bytes)', swapped.bytes, hf26.binary, locatorOf(hf26));
      const unsignedHf26 = v.guard('toBinaryForm(true)', () => tx.toBinaryForm(true));
      const hf26Id = v.guard('id', () => tx.id);
      if (unsignedHf26) v.eq('HF26 id = sha256(HF26 unsigned bytes)[0..20)', sha256(Buffer.from(unsignedHf26, 'hex')).subarray(0, 20).toString('hex'), hf26Id);
      v.ok('HF26 id differs from the legacy id exactly when the transaction holds an asset',
        (hf26Id === rec.id) === (swapped.assets === 0), `${swapped.assets} asset(s), HF26 id ${hf26Id}, legacy id ${rec.id}`);
      v.ok('HF26 digest differs from the legacy digest exactly when the transaction holds an asset',
        (v.guard('sigDigest', () => tx.sigDigest) === rec.sig_digest) === (swapped.assets === 0));
      if (swapped.assets > 0) stats.withAssets++;
      else if (hf26Id === rec.id) stats.sameHf26Id++;
    }
  }

  // hived's validation of the operations' own fields. fc logs a refused JSON payload to
  // stderr as it goes; that log is kept out of the output (the refusal itself is reported).
  let refusal = null;
  const write = process.stderr.write;
  process.stderr.write = () => true;
  try {
    tx.validate();
  } catch (e) {
    refusal = waxMessage(e);
  } finally {
    process.stderr.write = write;
  }
  if (rec.hived_validate === 'pass') {
    v.ok('wax validate() passes it (hived\'s validation)', refusal === null, `refused: ${clip(refusal || '', 300)}`);
    stats.validatePass++;
  } else if (rec.hived_validate === 'reject') {
    v.ok('wax validate() refuses it (hived\'s validation)', refusal !== null, 'it passed');
    if (refusal) v.notes.push(`refused: ${clip(refusal, 120)}`);
    stats.validateReject++;
  } else {
    v.fail('hived_validate', `${JSON.stringify(rec.hived_validate)} is not "pass" or "reject"`);
  }

  if (rec.generated) stats.generated[rec.generated] = (stats.generated[rec.generated] || 0) + 1;
  if (rec.fault) {
    const stage = rec.rejected_at;
    v.ok('rejected_at', stage === 'validation' || stage === 'chain_state', `${JSON.stringify(stage)}`);
    v.ok('hived_validate of a fault follows where it is rejected', (stage === 'validation') === (rec.hived_validate === 'reject'),
      `rejected_at ${stage}, hived_validate ${rec.hived_validate}`);
    stats.faults.push(`${rec.fault} (${stage}${refusal ? `: ${clip(refusal, 60)}` : ''})`);
  }
}

// ---- known answers ---------------------------------------------------------------------------

// A real main-net vote (wax's own example, block 5,000,000's era) and its id on the chain.
const REAL_VOTE = { ref_block_num: 19260, ref_block_prefix: 2140466769, expiration: '2016-09-15T19:47:33', extensions: [], signatures: [],
  operations: [{ type: 'vote_operation', value: { voter: 'taoteh1221', author: 'ozchartart', weight: 10000,
    permlink: 'usdsteem-btc-daily-poloniex-bittrex-technical-analysis-market-report-update-46-glass-half-full-but-the-bottle-s-left-empty-sept' } }] };
const REAL_VOTE_ID = '8e78947614be92e77f7db82237e523bdbd7a907b';
const MAINNET_CHAIN_ID = 'beeab0de' + '00'.repeat(28);

async function checkKnownFacts() {
  const v = new Vector('known facts: wax');
  v.eq('wax version', waxVersion, EXPECTED_WAX_VERSION);
  const w = await foundationFor(MAINNET_CHAIN_ID);
  v.eq('wax getVersion()', w.getVersion(), EXPECTED_WAX_VERSION);
  v.guard('a real main-net vote', () => {
    const tx = w.createTransactionFromJson(REAL_VOTE);
    v.eq('legacy_id of a real main-net vote', tx.legacy_id, REAL_VOTE_ID);
    v.eq('id (HF26) of a vote, which holds no asset', tx.id, REAL_VOTE_ID);
  });
  v.guard('validate() refuses a transaction without operations', () => {
    let threw = false;
    try {
      w.createTransactionFromJson({ ...REAL_VOTE, operations: [] }).validate();
    } catch {
      threw = true;
    }
    v.ok('validate() refuses a transaction without operations', threw);
  });
  v.finish();
}

// ---- main ------------------------------------------------------------------------------------

function readLines() {
  try {
    return (inputPath ? fs.readFileSync(inputPath, 'utf8') : fs.readFileSync(0, 'utf8')).split('\n').filter(Boolean);
  } catch (e) {
    console.log(`conformance: cannot read the vectors${inputPath ? ` from ${inputPath}` : ' from stdin'}: ${e.message}`);
    return [];
  }
}

async function main() {
  const started = Date.now();
  console.log(`conformance: checking apiary against @hiveio/wax ${waxVersion} (hived's protocol code) on node ${process.version}`);
  await checkKnownFacts();
  let txs = 0;
  for (const [n, line] of readLines().entries()) {
    let rec;
    try {
      rec = JSON.parse(line);
    } catch (e) {
      const v = new Vector(`line ${n + 1}`);
      v.fail('vector line', `is not valid JSON: ${e.message}`);
      v.finish();
      continue;
    }
    if (rec.kind !== 'tx') continue;  // keys, signatures, blocks: check.js's
    txs++;
    const v = new Vector(`tx ${rec.name}`);
    await checkTx(v, rec);
    v.finish();
  }

  const cov = new Vector('coverage');
  cov.ok('transaction vectors read', txs > 0, 'none (did apiary_conformance_vectors run?)');
  cov.ok('generated transactions', Object.keys(stats.generated).length > 0, 'none of the colony\'s generator');
  cov.ok('fault companions refused by validation', stats.faults.some((f) => f.includes('(validation')), 'none');
  cov.ok('fault companions only the chain\'s state refuses', stats.faults.some((f) => f.includes('(chain_state')), 'none');
  cov.finish();

  const gen = Object.entries(stats.generated).map(([k, c]) => `${c} ${k}`).join(', ');
  console.log(`conformance: ${txs} transactions, ${stats.checked} read by wax (${stats.unreadable.length} not: ` +
    `expiration past ${LAST_WAX_TIME}, beyond wax's time parser: ${stats.unreadable.join(', ') || 'none'})`);
  console.log(`conformance: generated by the colony: ${gen || 'none'}; faults: ${stats.faults.join(', ') || 'none'}`);
  console.log(`conformance: validate() checked on ${stats.validatePass} transactions hived's validation passes and ` +
    `${stats.validateReject} it refuses; ` +
    `HF26 id differs for the ${stats.withAssets} holding assets, equals the legacy id for ${stats.sameHf26Id}; ` +
    `${comparisons} comparisons in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed > 0 || txs === 0 ? 1 : 0;
}

await main();
