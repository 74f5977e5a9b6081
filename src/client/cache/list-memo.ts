/**
 * What the cache works out once per stored field list (its directives, its `Date` and `Age`, its
 * validators, the fields of an answer made from it), kept as long as the list lives: stored fields never
 * change, an update makes a new list. The list asked for last is compared first: a call asks about its
 * entry's list several times in a row, and a key revalidated many times a second keeps its list, while a
 * weak map's lookup hashes the list each time (together, the fifth largest cost the cache added to a
 * `304`). That slot holds one list and its value past their use at most: a few short strings.
 */
export class ListMemo<V> {
    readonly #values = new WeakMap<readonly string[], V>();
    #lastList: readonly string[] | undefined;
    #lastValue: V | undefined;

    get(list: readonly string[]): V | undefined {
        if (list === this.#lastList) {
            return this.#lastValue;
        }

        const value = this.#values.get(list);
        if (value !== undefined) {
            this.#lastList = list;
            this.#lastValue = value;
        }

        return value;
    }

    set(list: readonly string[], value: V): V {
        this.#values.set(list, value);
        this.#lastList = list;
        this.#lastValue = value;
        return value;
    }

    /** The value kept for `list`, worked out by `derive` the first time. */
    of(list: readonly string[], derive: (list: readonly string[]) => V): V {
        const known = this.get(list);
        return known !== undefined ? known : this.set(list, derive(list));
    }
}
