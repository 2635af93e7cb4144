import uuid

from host.ids import is_uuid7, new_id


def test_ids_are_uuid7_and_sort_in_creation_order() -> None:
    ids = [new_id() for _ in range(20_000)]
    assert all(uuid.UUID(i).version == 7 for i in ids)
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_only_canonical_uuid7_text_is_accepted() -> None:
    good = new_id()
    assert is_uuid7(good)
    assert not is_uuid7(good.upper())
    assert not is_uuid7(str(uuid.uuid4()))
    assert not is_uuid7("not-an-id")
    assert not is_uuid7("")
