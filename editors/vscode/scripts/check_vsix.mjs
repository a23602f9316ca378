// Checks that a packaged extension carries no end-to-end test code: every dist/*.js in the .vsix
// is searched for the scenario's and the test hooks' names. With --expect-test-code it checks
// the opposite (the e2e build must contain them), so the list cannot go stale unnoticed.
//
// Usage: node scripts/check_vsix.mjs out/codeqa.vsix
//        node scripts/check_vsix.mjs --expect-test-code out/codeqa-e2e.vsix
// Reads the zip with Node's zlib alone (central directory → local headers → inflateRaw).
import * as fs from "node:fs";
import * as zlib from "node:zlib";

/** Names only the e2e build has: the scenario's entry and env variables, its report, the click hook. */
const TEST_SYMBOLS = ["runE2e", "CODEQA_E2E_OUT", "CODEQA_E2E_SCENARIO", "screenshot-done", "afterReloadStep", "participantStep", "testClick"];

function entries(file) {
  const zip = fs.readFileSync(file);
  let end = zip.length - 22;
  while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) end--;
  if (end < 0) throw new Error(`${file} is not a zip file`);
  const count = zip.readUInt16LE(end + 10);
  let offset = zip.readUInt32LE(end + 16);
  const out = new Map();
  for (let i = 0; i < count; i++) {
    const method = zip.readUInt16LE(offset + 10);
    const size = zip.readUInt32LE(offset + 20);
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    const local = zip.readUInt32LE(offset + 42);
    const name = zip.toString("utf8", offset + 46, offset + 46 + nameLength);
    const dataStart = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(dataStart, dataStart + size);
    out.set(name, method === 0 ? data : zlib.inflateRawSync(data));
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return out;
}

const args = process.argv.slice(2);
const expectTestCode = args.includes("--expect-test-code");
const file = args.find((a) => !a.startsWith("--"));
if (!file) throw new Error("usage: check_vsix.mjs [--expect-test-code] FILE.vsix");
const scripts = [...entries(file)].filter(([name]) => /^extension\/dist\/[^/]+\.js$/.test(name));
if (!scripts.some(([name]) => name === "extension/dist/extension.js")) {
  console.error(`${file} has no extension/dist/extension.js`);
  process.exit(1);
}
const found = [];
for (const [name, data] of scripts) {
  const text = data.toString("utf8");
  for (const symbol of TEST_SYMBOLS) if (text.includes(symbol)) found.push(`${name}: ${symbol}`);
}
if (expectTestCode) {
  const missing = TEST_SYMBOLS.filter((symbol) => !found.some((f) => f.endsWith(`: ${symbol}`)));
  if (missing.length > 0) {
    console.error(`the test build lacks ${missing.join(", ")}: the list in check_vsix.mjs is stale`);
    process.exit(1);
  }
  console.log(`${file}: all ${TEST_SYMBOLS.length} test symbols present (${scripts.length} scripts)`);
} else if (found.length > 0) {
  console.error(`${file} contains test code:\n  ${found.join("\n  ")}`);
  process.exit(1);
} else {
  console.log(`${file}: no test code in ${scripts.map(([name]) => name.replace("extension/", "")).join(", ")}`);
}
