// Shared setup of the browser tests: `paimon-kernel serve` over the corpus on 127.0.0.1 and a
// headless Debian chromium (playwright-core) with a throwaway profile, started in `before`
// and stopped in `after`.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { repo, corpusDir } from "../node/common.mjs";

const targetDir = process.env.CARGO_TARGET_DIR || join(repo, "target");
/** The CLI binary of this tree (scripts/test-all.sh builds it first). */
export const bin = process.env.PAIMON_KERNEL_BIN || join(targetDir, "debug", "paimon-kernel");
/** Where screenshots and timings go. */
export const artifacts = process.env.PAIMON_TEST_ARTIFACTS || join(repo, "host-wasm", "test-artifacts");

/**
 * Register `before`/`after` hooks of the calling test file; returns `env` whose `base` (the
 * server's URL) and `context` (the browser context) are set once `before` has run.
 * `contextOptions` are added to chromium's persistent-context options.
 */
export function useBrowser(contextOptions = {}) {
  const env = { base: null, context: null };
  let server, userDataDir;
  before(async () => {
    assert.ok(existsSync(bin), `${bin} missing: build paimon-native first`);
    mkdirSync(artifacts, { recursive: true });
    server = spawn(bin, ["serve", corpusDir, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
    env.base = await new Promise((resolve, reject) => {
      let out = "";
      server.stdout.on("data", (d) => {
        out += d;
        const m = /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
        if (m) resolve(m[1]);
      });
      server.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
      setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 20000);
    });
    userDataDir = mkdtempSync(join(tmpdir(), "paimon-chromium-"));
    env.context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      viewport: { width: 1280, height: 900 },
      ...contextOptions,
    });
  });
  after(async () => {
    await env.context?.close();
    server?.kill();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });
  return env;
}
