// Packages the e2e test build of the extension as out/codeqa-e2e.vsix, for scripts/e2e.mjs only.
//
// It is the same extension (same id, so the same SecretStorage and settings) with a different
// bundle: `scripts/build.mjs --test` builds e2e/src/main.ts, which wraps the real `activate`
// and runs the scenario when CODEQA_E2E_OUT is set. The staging copy's package.json has no
// `vscode:prepublish`, so vsce packages these bundles instead of rebuilding the published ones.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const staging = path.join(root, "out", "e2e-extension");
const vsix = path.join(root, "out", "codeqa-e2e.vsix");

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: "inherit" });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${result.status}`);
}

fs.rmSync(staging, { recursive: true, force: true });
fs.mkdirSync(staging, { recursive: true });
run(process.execPath, [path.join(root, "scripts", "build.mjs"), "--test", staging], root);
const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
delete manifest.scripts;
delete manifest.devDependencies;
fs.writeFileSync(path.join(staging, "package.json"), JSON.stringify(manifest, null, 2));
for (const file of ["README.md", ".vscodeignore"]) fs.copyFileSync(path.join(root, file), path.join(staging, file));
fs.cpSync(path.join(root, "media"), path.join(staging, "media"), { recursive: true });
run(
  path.join(root, "node_modules", ".bin", "vsce"),
  ["package", "--no-dependencies", "--allow-missing-repository", "--skip-license", "--no-rewrite-relative-links", "-o", vsix],
  staging,
);
