"""Exit 0 when two snapshot files unpickle (CPython `pickle.load`) to equal objects.

Usage: python3 roundtrip_equal.py ORIGINAL CONVERTED. On a difference, prints the first path
where the two differ (e.g. `['segments'][3]['blocks'][0]['size']: 512 != 1024`) and exits 1.
Also checks what `==` cannot see: bool vs int and tuple vs list, which Python equality conflates
or PyTorch's viewer would read differently.
"""
import pickle
import sys


def load(path):
    with open(path, "rb") as f:
        return pickle.load(f)


def first_difference(a, b, path="") -> str | None:
    if type(a) is not type(b):
        return f"{path or 'top'}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        if set(a) != set(b):
            return f"{path or 'top'}: keys {sorted(set(a) ^ set(b), key=repr)} differ"
        for k in a:
            d = first_difference(a[k], b[k], f"{path}[{k!r}]")
            if d:
                return d
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path or 'top'}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if a != b and not (a != a and b != b):  # NaN equals NaN here
        return f"{path or 'top'}: {a!r} != {b!r}"
    return None


if __name__ == "__main__":
    original, converted = load(sys.argv[1]), load(sys.argv[2])
    diff = first_difference(original, converted)
    if diff is None and original != converted:
        diff = "top: objects differ under == but no path was found"
    if diff:
        print(diff)
        sys.exit(1)
    print("equal")
