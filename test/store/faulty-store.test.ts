// The store contract on the tests' FaultyStore (over a MemoryStore): the
// stand-in the rule tests break storage with must itself be a faithful Store,
// and fail as the durable store does.
import { MemoryStore } from "../../src/store/memory-store.js";
import { FaultyStore } from "../support/faulty-store.js";
import { WriteFault } from "../support/write-fault.js";
import { describeStoreContract, type StoreUnderTest } from "./store-contract.js";

describeStoreContract("FaultyStore over MemoryStore", async () => {
  const writeFault = new WriteFault();
  let memory = new MemoryStore();
  const fixture: StoreUnderTest = {
    store: new FaultyStore(memory, writeFault),
    writeFault,
    async reopen() {
      await fixture.store.close();
      memory = new MemoryStore(memory.contents);
      fixture.store = new FaultyStore(memory, writeFault);
      return fixture.store;
    },
    dispose: () => fixture.store.close(),
  };
  return fixture;
});
