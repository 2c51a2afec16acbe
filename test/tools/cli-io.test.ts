import { afterEach, describe, expect, it } from 'vitest';
import { cliIo, processIo, setExitCode, withCliIo, writeOut, type CliIo } from '../../src/cli/io.js';

describe("a CLI run's io", () => {
  const before = process.exitCode;
  afterEach(() => {
    process.exitCode = before;
  });

  it("an in-process run writes to its own io and returns its exit code; the process's is left alone", async () => {
    let out = '';
    const io: CliIo = { stdout: (t) => void (out += t), stderr: () => undefined, env: {}, cwd: '/tmp', stderrIsTTY: false };
    const code = await withCliIo(io, async () => {
      await Promise.resolve();
      writeOut('hello\n');
      expect(cliIo()).toBe(io);
      setExitCode(3);
    });
    expect(out).toBe('hello\n');
    expect(code).toBe(3);
    expect(process.exitCode).toBe(before);
  });

  it("the bin's run on the process's own io sets the process's exit code and returns it", async () => {
    const io = processIo();
    const code = await withCliIo(io, async () => {
      await Promise.resolve();
      setExitCode(4);
    });
    expect(code).toBe(4);
    expect(process.exitCode).toBe(4);
    // Outside any in-process run, commands see the process's own io.
    expect(cliIo().env).toBe(process.env);
  });
});
