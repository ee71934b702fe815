import { join } from 'node:path';
import type { ProxySettings } from './proxies.js';
import { ProxyProcess, proxyBinary } from './proxy-process.js';

/**
 * HAProxy in front of the fake: HTTP mode, `proto h2` to the server, the client side h2c or TLS
 * with ALPN h2. `tune.h2.max-concurrent-streams` keeps its default (100), which a burst must cross.
 * `timeout tunnel` stays long: it does not govern gRPC streams (`timeout server` does; tried).
 */
export function haproxyConfig(s: ProxySettings): string {
  const bind = s.tls
    ? `bind 127.0.0.1:${s.listenPort} ssl crt ${s.tls.pemFile} alpn h2`
    : `bind 127.0.0.1:${s.listenPort} proto h2`;
  return `global
  maxconn 4096

defaults
  mode http
  timeout connect 5s
  timeout client ${s.clientTimeoutS}s
  timeout server ${s.serverTimeoutS}s
  timeout tunnel 300s

frontend grpc
  ${bind}
  default_backend fake

backend fake
  server fake 127.0.0.1:${s.upstreamPort} proto h2
`;
}

/** Master-worker mode (`-W`) with a master CLI socket (`-S`), as systemd units run HAProxy. */
const LOADED = /Loading success/;

export function haproxyProcess(dir: string, configFile: string): ProxyProcess {
  return new ProxyProcess(
    proxyBinary('haproxy'),
    ['-W', '-S', join(dir, 'master.sock'), '-f', configFile],
    LOADED,
  );
}

/** SIGUSR2 to the master: a new worker reads the config, the old one finishes its streams. */
export async function reloadHaproxy(proc: ProxyProcess): Promise<void> {
  const before = proc.count(LOADED);
  proc.signal('SIGUSR2');
  await proc.waitUntil(() => proc.count(LOADED) > before, 'HAProxy to load its config again');
}
