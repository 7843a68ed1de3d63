"""Silo's serialization in JavaScript: the oracle of the differential tests (run by ``node -e``).

``CANON`` defines ``canon(value, indent)``: canonical form v1 as Node prints it, each
object's keys sorted by ``Object.keys(o).sort()`` (UTF-16 code unit order) so JavaScript's
habit of putting integer-like keys first does not matter. Scripts start with it.
"""

CANON = r"""
const canon = (v, ind) => {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  const inner = ind + "  ";
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    return "[\n" + v.map((x) => inner + canon(x, inner)).join(",\n") + "\n" + ind + "]";
  }
  const keys = Object.keys(v).sort();
  if (keys.length === 0) return "{}";
  return "{\n" + keys.map((k) => inner + JSON.stringify(k) + ": " + canon(v[k], inner))
    .join(",\n") + "\n" + ind + "}";
};
"""
