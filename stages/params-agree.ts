// What "a stage's params agree with its schema" means as types, apart from
// the registry so that the test can check it on a schema of its own.

/**
 * The same type, to the property: one added, dropped (an optional one too, which assignability in both
 * directions would let pass), made optional or retyped on one side is not the same.
 */
export type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Read-only or not is the code's business, not the schema's. */
export type Mutable<T> = T extends readonly (infer U)[]
  ? Mutable<U>[]
  : T extends object
    ? { -readonly [K in keyof T]: Mutable<T[K]> }
    : T;

/** Whether interface P is the type schema type S describes, read-only marks aside. */
export type Agrees<P, S> = Same<Mutable<P>, Mutable<S>>;
