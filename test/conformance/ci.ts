/**
 * Whether this run is CI: `CI` set to anything but '' or 'false' (`.ci/run` sets 'true', some
 * services '1'). In CI the real Triton is always set up, so its absence fails the run instead of
 * skipping the real-server half of the conformance suite.
 */
export function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== 'false';
}
