"""Tensor maps (course/hopper/tensormap.py): each cuTensorMapEncodeTiled rule is named when
broken, the rules table lists them, and ``encode`` checks its arguments before
the driver is ever called (so none of this needs a GPU)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from course.errors import CourseError, TensorMapRuleError
from course.hopper import tensormap
from course.hopper.tensormap import ENCODE_RULES, TileMap, encode, rules_table

BROKEN = [
    (TileMap(256, 256, 257, 64), 0, "box-dim-max", "box width 257"),
    (TileMap(256, 256, 64, 0), 0, "box-dim-max", "box height 0"),
    (TileMap(256, 256, 3, 64), 0, "box-inner-16B", "3 x 4 B = 12 B"),
    (TileMap(256, 256, 4, 64, elem_bytes=2), 0, "box-inner-16B", "4 x 2 B = 8 B"),
    (TileMap(250, 256, 64, 64), 0, "stride-16B", "250 x 4 B = 1000 B"),
    (TileMap(256, 256, 64, 64), 8, "address-16B", "address 0x8"),
    (TileMap(0, 256, 64, 64), 0, "global-dim", "width 0"),
    (TileMap(256, 2**32 + 1, 64, 64), 0, "global-dim", f"height {2**32 + 1}"),
    (TileMap(256, 256, 64, 64, swizzle="128B"), 0, "swizzle-span", "256 B rows with SWIZZLE_128B"),
    (TileMap(256, 256, 32, 64, swizzle="64B"), 0, "swizzle-span", "128 B rows with SWIZZLE_64B"),
    (TileMap(256, 256, 16, 64, swizzle="32B"), 0, "swizzle-span", "64 B rows with SWIZZLE_32B"),
]


@pytest.mark.parametrize(("m", "address", "rule", "found"), BROKEN)
def test_each_broken_rule_is_named_with_what_was_found(m, address, rule, found):
    with pytest.raises(TensorMapRuleError) as info:
        m.check(address)
    assert info.value.rule == rule
    assert str(info.value).startswith(rule + ": ")
    assert f"(found {found})" in str(info.value)
    spec = next(r for r in ENCODE_RULES if r.id == rule)
    assert spec.rule in str(info.value) and spec.why in str(info.value)


def test_every_rule_is_exercised_by_a_broken_map():
    assert {rule for _, _, rule, _ in BROKEN} == {r.id for r in ENCODE_RULES}
    assert len({r.id for r in ENCODE_RULES}) == len(ENCODE_RULES)


@pytest.mark.parametrize(
    ("m", "address"),
    [
        (TileMap(256, 256, 256, 256), 0),
        (TileMap(4, 1, 4, 1), 16),
        (TileMap(8, 8, 8, 8, elem_bytes=2), 0),
        (TileMap(256, 256, 32, 64, swizzle="128B"), 0),  # 32 floats = 128 B: exactly the span
        (TileMap(256, 256, 64, 64, elem_bytes=2, swizzle="128B"), 0),  # 64 halves = 128 B
        (TileMap(256, 256, 16, 64, swizzle="64B"), 0),
        (TileMap(256, 256, 8, 64, swizzle="32B"), 0),
        (TileMap(256, 256, 256, 64, swizzle="none"), 0),  # no swizzle, no span limit
    ],
)
def test_rules_at_their_edges_are_accepted(m, address):
    m.check(address)


def test_box_bytes_and_row_stride():
    m = TileMap(256, 128, 64, 32, elem_bytes=2)
    assert m.row_stride_bytes == 512
    assert m.box_bytes == 64 * 32 * 2


def test_rules_table_lists_every_rule_escaped():
    table = rules_table()
    html = table._repr_html_()
    text = str(table)
    for r in ENCODE_RULES:
        assert f"<code style='white-space:nowrap'>{r.id}</code>" in html
        assert f"{r.id}: {r.rule} ({r.why})" in text
    assert "boxDim[0] x element size" in html
    assert "<table>" in html and "2^40" in html
    assert html.count("<tr>") == len(ENCODE_RULES) + 1


# --- encode, without a GPU -----------------------------------------------------------------------
@pytest.fixture
def no_driver(monkeypatch):
    """The driver must not be reached: argument errors are found before it."""

    def driver():
        pytest.fail("encode called the driver for arguments it should have refused")

    monkeypatch.setattr(tensormap, "driver", driver)


@pytest.mark.parametrize(("m", "address", "rule", "found"), BROKEN)
def test_encode_refuses_a_broken_map_before_the_driver(no_driver, m, address, rule, found):
    with pytest.raises(TensorMapRuleError) as info:
        encode(m, address)
    assert info.value.rule == rule


@pytest.mark.parametrize("elem_bytes", [3, 8])
def test_encode_refuses_an_element_size_it_has_no_data_type_for(no_driver, elem_bytes):
    m = TileMap(256, 256, 64, 64, elem_bytes=elem_bytes)
    m.check()  # the layout itself is fine
    with pytest.raises(
        TensorMapRuleError, match=rf"element size must be 4, 2 or 1 bytes \(got {elem_bytes}\)"
    ) as info:
        encode(m, 0)
    assert info.value.rule == "dtype"


class _Enum(SimpleNamespace):
    def __getattr__(self, name):  # any member name reads back as itself
        return name


def _fake_driver(calls: list, status: int = 0):
    def encode_tiled(*args):
        calls.append(args)
        return status, SimpleNamespace(opaque=list(range(100, 116)))

    return SimpleNamespace(
        cuuint64_t=lambda v: ("u64", v),
        cuuint32_t=lambda v: ("u32", v),
        CUtensorMapSwizzle=_Enum(),
        CUtensorMapDataType=_Enum(),
        CUtensorMapInterleave=_Enum(),
        CUtensorMapL2promotion=_Enum(),
        CUtensorMapFloatOOBfill=_Enum(),
        cuTensorMapEncodeTiled=encode_tiled,
    )


def test_encode_passes_the_maps_shape_to_the_driver_and_returns_its_128_bytes(monkeypatch):
    calls: list = []
    monkeypatch.setattr(tensormap, "driver", lambda: _fake_driver(calls))
    m = TileMap(1024, 512, 64, 32, elem_bytes=2, swizzle="128B")
    out = encode(m, 0x7F0000000)
    ((dtype, rank, address, dims, strides, box, elem_strides, interleave, swizzle, l2, oob),) = calls
    assert dtype == "CU_TENSOR_MAP_DATA_TYPE_FLOAT16" and rank == 2 and address == 0x7F0000000
    assert dims == [("u64", 1024), ("u64", 512)]  # innermost (contiguous) first
    assert strides == [("u64", 2048)]  # bytes per row
    assert box == [("u32", 64), ("u32", 32)]
    assert elem_strides == [("u32", 1), ("u32", 1)]
    assert swizzle == "CU_TENSOR_MAP_SWIZZLE_128B"
    assert oob == "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"
    assert out.dtype == tensormap.TENSOR_MAP_DTYPE and out.dtype.itemsize == 128
    assert out["opaque"].tolist() == list(range(100, 116))


def test_an_fp8_map_is_a_uint8_map_whose_rows_are_bytes(monkeypatch):
    # Day 87: e4m3 A, K = 528 bytes a row, a 128-byte box inner dimension under the 128B swizzle.
    calls: list = []
    monkeypatch.setattr(tensormap, "driver", lambda: _fake_driver(calls))
    encode(TileMap(528, 1000, 128, 128, elem_bytes=1, swizzle="128B"), 0x7F0000000)
    ((dtype, _rank, _address, dims, strides, box, *_rest),) = calls
    assert dtype == "CU_TENSOR_MAP_DATA_TYPE_UINT8"
    assert dims == [("u64", 528), ("u64", 1000)] and strides == [("u64", 528)]
    assert box == [("u32", 128), ("u32", 128)]
    with pytest.raises(TensorMapRuleError) as info:  # 520 bytes: not a multiple of 16
        TileMap(520, 1000, 128, 128, elem_bytes=1, swizzle="128B").check()
    assert info.value.rule == "stride-16B"


def test_a_driver_refusal_names_the_call_and_the_map(monkeypatch):
    calls: list = []
    monkeypatch.setattr(tensormap, "driver", lambda: _fake_driver(calls, status=1))
    with pytest.raises(CourseError, match=r"cuTensorMapEncodeTiled for TileMap\(width=256.*\) failed"):
        encode(TileMap(256, 256, 64, 64), 0)
    assert len(calls) == 1


def test_a_map_over_fewer_columns_keeps_the_rows_stride():
    # Day 76's over-the-edge experiment: a 200 x 200 tensor over rows of 256 floats.
    narrow = TileMap(200, 200, 64, 64, stride=256 * 4)
    narrow.check()
    assert narrow.row_stride_bytes == 1024 and TileMap(200, 200, 64, 64).row_stride_bytes == 800
    with pytest.raises(TensorMapRuleError, match="must cover a row"):
        TileMap(300, 200, 64, 64, stride=1024).check()
    with pytest.raises(TensorMapRuleError, match="stride-16B"):
        TileMap(200, 200, 64, 64, stride=1000).check()
