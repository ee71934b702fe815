import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestPki } from '../../../packages/grpc/test/certificates.js';
import { freePorts } from '../../reliability/support/processes.js';
import { haproxyConfig, haproxyProcess, reloadHaproxy } from './haproxy.js';
import { nginxConfig, nginxProcess, reloadNginx } from './nginx.js';
import type { ProxyProcess } from './proxy-process.js';

export type ProxyKind = 'nginx' | 'haproxy';
/** Where the client's HTTP/2 ends: `h2c` in plaintext, `tls` terminated at the proxy. The proxy always talks h2c to the fake. */
export type ProxyMode = 'h2c' | 'tls';

export const PROXY_KINDS: readonly ProxyKind[] = ['nginx', 'haproxy'];
export const PROXY_MODES: readonly ProxyMode[] = ['h2c', 'tls'];

/** What a proxy's config says. */
export interface ProxySettings {
  readonly listenPort: number;
  /** The fake's gRPC port (plaintext). */
  readonly upstreamPort: number;
  /** Certificate and key files, for `tls`. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string; readonly pemFile: string };
  /** How long the server may stay silent, in seconds (nginx `grpc_read_timeout`, HAProxy `timeout server`). */
  readonly serverTimeoutS: number;
  /** How long the client may stay silent, in seconds (nginx `client_body_timeout`, HAProxy `timeout client`). */
  readonly clientTimeoutS: number;
  /** The directory the proxy keeps its pid file, logs and sockets in. */
  readonly dir: string;
}

/** A proxy in front of a fake Triton, run as the test's child process in a directory of its own. */
export interface RunningProxy {
  readonly kind: ProxyKind;
  readonly mode: ProxyMode;
  /** The URL a client uses: `http://` for h2c, `https://` for TLS. */
  readonly url: string;
  /** Reloads the config as an operator does; resolves once the new workers serve. Old workers drain. */
  reload(): Promise<void>;
  /** Stops the proxy at once (connections closed); resolves once it is gone. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** Stops the proxy and removes its directory. */
  close(): Promise<void>;
  /** What the proxy logged, for failure messages and for tests that read it. */
  log(): string;
}

export interface StartProxyOptions {
  readonly kind: ProxyKind;
  readonly mode: ProxyMode;
  readonly upstreamPort: number;
  /** Needed for `tls`: the proxy serves `serverCert`, clients trust `ca`. */
  readonly pki?: TestPki;
  /** `ProxySettings.serverTimeoutS`; default 300 s, longer than any test, so only the timeout tests see it. */
  readonly serverTimeoutS?: number;
  /** `ProxySettings.clientTimeoutS`; default 300 s. */
  readonly clientTimeoutS?: number;
}

/** Writes the proxy's config into a fresh directory, starts it and waits until it accepts connections. */
export async function startProxy(options: StartProxyOptions): Promise<RunningProxy> {
  const { kind, mode } = options;
  const dir = mkdtempSync(join(tmpdir(), `trtllm-${kind}-`));
  // nginx workers drop root privileges; they must still reach the directory.
  chmodSync(dir, 0o755);
  const tls = mode === 'tls' ? { tls: writeCertificates(dir, options.pki) } : {};
  const configFile = join(dir, `${kind}.conf`);
  const proc: ProxyProcess =
    kind === 'nginx' ? nginxProcess(dir, configFile) : haproxyProcess(dir, configFile);
  const reload = kind === 'nginx' ? () => reloadNginx(proc, dir, configFile) : () => reloadHaproxy(proc);
  let settings: ProxySettings | undefined;
  // The port was free a moment ago; another process may take it before the proxy binds it.
  for (let attempt = 1; settings === undefined; attempt++) {
    const [listenPort] = await freePorts(1);
    const tried: ProxySettings = {
      listenPort: listenPort!,
      upstreamPort: options.upstreamPort,
      serverTimeoutS: options.serverTimeoutS ?? 300,
      clientTimeoutS: options.clientTimeoutS ?? 300,
      dir,
      ...tls,
    };
    writeFileSync(configFile, kind === 'nginx' ? nginxConfig(tried) : haproxyConfig(tried));
    try {
      await proc.start(tried.listenPort);
      settings = tried;
    } catch (err) {
      await proc.stop();
      if (attempt < 3 && /address already in use|cannot bind/i.test(proc.log())) continue;
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }
  const { listenPort } = settings;
  return {
    kind,
    mode,
    url: `${mode === 'tls' ? 'https' : 'http'}://127.0.0.1:${listenPort}`,
    reload,
    stop: () => proc.stop(),
    start: () => proc.start(listenPort),
    close: async () => {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => proc.log(),
  };
}

function writeCertificates(dir: string, pki: TestPki | undefined): NonNullable<ProxySettings['tls']> {
  if (pki === undefined) throw new Error('a TLS proxy needs a pki');
  const certFile = join(dir, 'server.pem');
  const keyFile = join(dir, 'server.key');
  // HAProxy reads certificate and key from one file.
  const pemFile = join(dir, 'server-with-key.pem');
  writeFileSync(certFile, pki.serverCert);
  writeFileSync(keyFile, pki.serverKey, { mode: 0o600 });
  writeFileSync(pemFile, pki.serverCert + pki.serverKey, { mode: 0o600 });
  return { certFile, keyFile, pemFile };
}
