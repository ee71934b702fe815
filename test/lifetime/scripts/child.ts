// What every lifetime script shares: the fake's addresses (from the test process) and the line that
// marks the end of the script's last call, which the test compares with the time the process exited.

function env(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

export const grpcUrl = env('TRITON_GRPC_URL');
export const httpUrl = env('TRITON_HTTP_URL');
export const grpcPort = new URL(grpcUrl).port;

/** Printed right after the script's last call returned; the script then ends without close(). */
export function lastCall(): void {
  console.log(`last call ended at ${Date.now()}`);
}
