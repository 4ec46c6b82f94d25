// The suite's published runner lives under node_modules, which vitest excludes by default.
export default {
  test: {
    include: ["suite.test.mjs"],
    exclude: [],
    testTimeout: 5000,
  },
}
