// How a form shows a refusal: each field's message beside its field, the
// others in the summary, and no field named twice.
import { describe, expect, it } from "vitest";
import { ApiError } from "../../console/src/api.js";
import { formErrorOf, localFormError } from "../../console/src/form-errors.js";

const refusal = new ApiError(400, "INVALID_ARGUMENT", "name: too long; tags: too many", [
  { field: "name", reason: "INVALID_ARGUMENT", message: "too long" },
  { field: "tags", reason: "INVALID_ARGUMENT", message: "too many" },
]);

describe("the console's form errors", () => {
  it("puts shown fields beside themselves and the others in the summary", () => {
    const error = formErrorOf(refusal, (field) => field === "name");
    expect([...error.fields]).toEqual([["name", "too long"]]);
    expect(error.message).toBe("The broker refused 1 field; see the message beside each. tags: too many");
  });

  it("uses the refusal's own message when no field has a place in the form, naming each once", () => {
    expect(formErrorOf(refusal, () => false)).toEqual({ message: "name: too long; tags: too many", fields: new Map() });
    const local = localFormError(new Map([["a", "not a number"]]), () => false);
    expect(local.message).toBe("a: not a number");
  });
});
