/**
 * True only in the bundles `scripts/build.mjs --test` makes for the e2e test; esbuild replaces
 * it with `false` in every other build and drops the code it guards (the published .vsix has
 * no test hooks: scripts/check_vsix.mjs checks).
 */
declare const CODEQA_TEST_BUILD: boolean;
