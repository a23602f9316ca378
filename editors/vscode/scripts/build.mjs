// Bundles the extension (Node, CommonJS, `vscode` external) and the two webview scripts
// (browser IIFEs) into dist/.
//
// --production  minified, no source maps (what `vsce package` runs).
// --test DIR    the e2e test build into DIR/dist: the extension entry is e2e/src/main.ts (the
//               real `activate` plus the end-to-end scenario) and CODEQA_TEST_BUILD is true, so
//               the webviews keep their click hook. Only scripts/package_e2e.mjs uses it: the
//               published bundles never contain the scenario or the hooks (scripts/check_vsix.mjs).
import * as esbuild from "esbuild";
import * as path from "node:path";

const argv = process.argv.slice(2);
const production = argv.includes("--production");
const testIndex = argv.indexOf("--test");
const testDir = testIndex >= 0 ? argv[testIndex + 1] : undefined;
if (testIndex >= 0 && !testDir) throw new Error("--test needs an output directory");
const dist = testDir ? path.join(testDir, "dist") : "dist";
const common = {
  bundle: true,
  minify: production,
  sourcemap: !production,
  logLevel: "info",
  define: { CODEQA_TEST_BUILD: testDir ? "true" : "false" },
};

await Promise.all([
  esbuild.build({
    ...common,
    entryPoints: [testDir ? "e2e/src/main.ts" : "src/extension.ts"],
    outfile: path.join(dist, "extension.js"),
    platform: "node",
    format: "cjs",
    target: "node18",
    external: ["vscode"],
  }),
  esbuild.build({
    ...common,
    entryPoints: ["src/webview/chat.ts"],
    outfile: path.join(dist, "chat.js"),
    platform: "browser",
    format: "iife",
    target: "es2020",
  }),
  esbuild.build({
    ...common,
    entryPoints: ["src/webview/main.ts"],
    outfile: path.join(dist, "webview.js"),
    platform: "browser",
    format: "iife",
    target: "es2020",
  }),
]);
