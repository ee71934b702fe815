// jstat ships no types; the side by side needs one function of it. It is CommonJS: its exports
// reach an ES module as the default import.
declare module 'jstat' {
  const jstat: {
    readonly jStat: {
      readonly studentt: {
        /** The `p` quantile of Student's t distribution with `dof` degrees of freedom. */
        inv(p: number, dof: number): number;
      };
    };
  };
  export default jstat;
}
