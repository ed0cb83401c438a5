// The store contract on ClassicLevelStore: a fresh temporary directory per
// test, removed after; writes fail where a failing disk's do (faulty-level.ts).
import { describeStoreContract } from "./store-contract.js";
import { openStoreFixture } from "./store-fixtures.js";

describeStoreContract("ClassicLevelStore", openStoreFixture);
