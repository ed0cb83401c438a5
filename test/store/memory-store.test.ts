// The store contract on MemoryStore; a reopen is a new store on the same contents.
import { MemoryStore } from "../../src/store/memory-store.js";
import { describeStoreContract, type StoreUnderTest } from "./store-contract.js";

describeStoreContract("MemoryStore", async () => {
  const fixture: StoreUnderTest & { store: MemoryStore } = {
    store: new MemoryStore(),
    async reopen() {
      await fixture.store.close();
      fixture.store = new MemoryStore(fixture.store.contents);
      return fixture.store;
    },
    dispose: () => fixture.store.close(),
  };
  return fixture;
});
