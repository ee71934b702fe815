import { join } from 'node:path';
import type { ProxySettings } from './proxies.js';
import { ProxyProcess, proxyBinary, runProxyCommand } from './proxy-process.js';

/**
 * nginx in front of the fake: `grpc_pass` over h2c, the client side h2c or TLS. Only the timeouts
 * are set; `http2_max_concurrent_streams` keeps its default (128), which a burst must cross.
 * nginx 1.22 (Debian 12) still spells HTTP/2 as a `listen` parameter.
 */
export function nginxConfig(s: ProxySettings): string {
  const d = s.dir;
  const listen = s.tls
    ? `listen 127.0.0.1:${s.listenPort} ssl http2;
      ssl_certificate ${s.tls.certFile};
      ssl_certificate_key ${s.tls.keyFile};`
    : `listen 127.0.0.1:${s.listenPort} http2;`;
  return `daemon off;
master_process on;
worker_processes 1;
pid ${join(d, 'nginx.pid')};
error_log ${join(d, 'error.log')} notice;
events { worker_connections 2048; }
http {
  access_log off;
  client_body_temp_path ${join(d, 'client_body')};
  proxy_temp_path ${join(d, 'proxy')};
  fastcgi_temp_path ${join(d, 'fastcgi')};
  uwsgi_temp_path ${join(d, 'uwsgi')};
  scgi_temp_path ${join(d, 'scgi')};
  server {
    ${listen}
    location / {
      grpc_pass grpc://127.0.0.1:${s.upstreamPort};
      grpc_read_timeout ${s.serverTimeoutS}s;
      grpc_send_timeout ${s.serverTimeoutS}s;
      client_body_timeout ${s.clientTimeoutS}s;
    }
  }
}
`;
}

function cliArgs(dir: string, configFile: string): string[] {
  // -e: the error log before the config is read, so nothing is written under /var/log.
  return ['-p', dir, '-c', configFile, '-e', join(dir, 'error.log')];
}

const WORKER_STARTED = /start worker process /;

export function nginxProcess(dir: string, configFile: string): ProxyProcess {
  return new ProxyProcess(
    proxyBinary('nginx'),
    cliArgs(dir, configFile),
    WORKER_STARTED,
    join(dir, 'error.log'),
  );
}

/** `nginx -s reload`, read from the test's own pid file; resolves once the new worker has started. */
export async function reloadNginx(proc: ProxyProcess, dir: string, configFile: string): Promise<void> {
  const before = proc.count(WORKER_STARTED);
  runProxyCommand(proxyBinary('nginx'), [...cliArgs(dir, configFile), '-s', 'reload']);
  await proc.waitUntil(() => proc.count(WORKER_STARTED) > before, 'nginx to start a new worker');
}
