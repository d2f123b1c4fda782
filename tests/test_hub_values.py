"""deploy/z2jh-values.yaml: valid for the chart it names, its GPU profiles, the submissions service and
its tokens, sized for a class of 300, and the same pull as the instructors' page's link (book/instructors/jupyterhub.md)."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import jsonschema
import pytest
import yaml
from hub_files import ROOT, VALUES, hook_limit, hook_pull, readme_links
from hub_files import values as _values

from course.page.contents import START
from course.quiz import hub_service
from course.quiz.collect import GROUP_SCOPE, SERVICE_SCOPES

CHART = ROOT / "tests" / "data" / "z2jh"  # the chart's published schema and default values (README there)


def _helm_merge(defaults: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """The values helm renders with: ``given`` over the chart's defaults, maps merged key by key,
    anything else replaced, a null deleting the default (helm's coalescing of values)."""
    out = copy.deepcopy(defaults)
    for key, value in given.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _helm_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _problems(values: dict[str, Any]) -> list[str]:
    """What the chart's schema refuses in these values, as 'path: message' lines."""
    schema = json.loads((CHART / "values.schema.json").read_text())
    merged = _helm_merge(yaml.safe_load((CHART / "values.yaml").read_text()), values)
    validator = jsonschema.Draft7Validator(schema)
    return sorted(
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(merged)
    )


def test_the_chart_schema_is_a_schema_and_accepts_its_own_defaults():
    schema = json.loads((CHART / "values.schema.json").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    assert _problems({}) == []
    assert "--version 4.4.0" in VALUES.read_text()  # the chart version the vendored schema is from


def test_the_values_file_is_valid_for_the_chart():
    assert _problems(_values()) == []


@pytest.mark.parametrize(
    "where, wrong",
    [
        (("singleuser",), ("defaultUrl", "defaultURL")),
        (("singleuser", "storage"), ("capacity", "capcity")),
        (("cull",), ("timeout", "timout")),
        ((), ("singleuser", "singleusers")),
    ],
)
def test_a_misspelled_key_is_refused(where, wrong):
    values = _values()
    part = values
    for key in where:
        part = part[key]
    right, misspelled = wrong
    part[misspelled] = part.pop(right)
    problems = _problems(values)
    assert problems == [
        f"{'.'.join(where)}: Additional properties are not allowed ('{misspelled}' was unexpected)"
    ]


def test_a_value_of_the_wrong_kind_is_refused():
    values = _values()
    values["cull"]["timeout"] = "30m"
    assert _problems(values) == ["cull.timeout: '30m' is not of type 'integer', 'null'"]


# The MIG 1g profile of each card (NVIDIA's MIG user guide, "Supported MIG Profiles"): 1/7 of
# the SMs and 1/8 of the memory, seven to a card.
MIG_1G = {"H200": "1g.18gb", "H100 80GB": "1g.10gb"}
# The KubeSpawner options the profiles set; a misspelled one would be passed through unchecked
# (the chart does not validate profileList), and the learner would get no GPU.
KUBESPAWNER_OPTIONS = {"extra_resource_limits", "tolerations"}
GPU_TAINT = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def test_the_gpu_profiles_a_mig_slice_by_default_a_whole_gpu_and_none():
    profiles = _values()["singleuser"]["profileList"]
    limits = [p.get("kubespawner_override", {}).get("extra_resource_limits", {}) for p in profiles]
    for profile in profiles:
        assert set(profile.get("kubespawner_override", {})) <= KUBESPAWNER_OPTIONS, profile["display_name"]
        assert set(profile) <= {"display_name", "description", "default", "kubespawner_override"}
    (default,) = [p for p in profiles if p.get("default")]
    assert "MIG 1g.18gb" in default["display_name"]
    for card, mig in MIG_1G.items():
        (profile,) = [p for p in profiles if p["display_name"].startswith(f"{card}, a MIG {mig} slice")]
        assert profile["kubespawner_override"]["extra_resource_limits"] == {f"nvidia.com/mig-{mig}": "1"}
        assert "one of seven" in profile["display_name"]
    assert {"nvidia.com/gpu": "1"} in limits  # a whole card, for measuring
    assert {} in limits  # and no GPU: every page still works
    for lim in limits:
        assert all(re.fullmatch(r"nvidia\.com/(gpu|mig-\dg\.\d+gb)", name) for name in lim)
        assert all(v == "1" for v in lim.values())


def test_the_readme_link_and_the_start_hook_pull_the_same_into_the_home():
    repo, branch, folder = hook_pull()
    links = readme_links()
    assert links, "book/instructors/jupyterhub.md gives no nbgitpuller link"
    for query in links:
        assert query == {
            "repo": repo,
            "branch": branch,
            "targetpath": folder,
            "urlpath": f"lab/tree/{folder}/notebooks/{START}",
        }
    # The hub opens the same page, and it is one of this checkout's.
    assert _values()["singleuser"]["defaultUrl"] == f"/lab/tree/{folder}/notebooks/{START}"
    assert (ROOT / "notebooks" / START).is_file()


def test_the_submissions_service_its_token_and_the_learners_scopes_fit_together():
    values = _values()
    hub = values["hub"]
    service = hub["services"][hub_service.NAME]
    # The hub runs the service file the chart mounts, on the volume the chart mounts.
    script, root = service["command"][1], service["command"][3]
    assert service["command"][2] == "--root"
    assert hub["extraFiles"]["hopper-submit"]["mountPath"] == script
    assert (
        "--set-file hub.extraFiles.hopper-submit.stringData=course/quiz/hub_service.py" in VALUES.read_text()
    )
    (volume,) = [m for m in hub["extraVolumeMounts"] if m["mountPath"] == root]
    (claim,) = [v for v in hub["extraVolumes"] if v["name"] == volume["name"]]
    pvc = yaml.safe_load((ROOT / "deploy" / "hopper-submissions-pvc.yaml").read_text())
    assert claim["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"]
    # Its port: the URL the hub gives it, the hub's Service, the learners' Submit, the network rules.
    port = int(service["url"].rsplit(":", 1)[1])
    assert {p["port"] for p in hub["service"]["extraPorts"]} == {port}
    submit = values["singleuser"]["extraEnv"]["COURSE_SUBMIT_URL"]
    assert submit == f"{service['url']}/services/{hub_service.NAME}/"
    for rules in (
        hub["networkPolicy"]["ingress"],
        values["singleuser"]["networkPolicy"]["egress"],
        values["proxy"]["chp"]["networkPolicy"]["egress"],
    ):
        assert [p["port"] for rule in rules for p in rule["ports"]] == [port]
    # The collector's token: a service with no URL (the chart keeps its token in the Secret "hub"),
    # whose role holds what `course quiz collect` asks for and nothing more.
    assert hub["services"]["hopper-collector"] == {}
    role = hub["loadRoles"]["hopper-collector"]
    assert role["services"] == ["hopper-collector"]
    assert sorted(role["scopes"]) == sorted([*SERVICE_SCOPES, GROUP_SCOPE])
    assert hub_service.COLLECT_SCOPE in hub["config"]["JupyterHub"]["custom_scopes"]
    # A learner's server token and every user: the service, and nothing of anyone else's.
    assert hub["loadRoles"]["user"]["scopes"] == ["self", hub_service.ACCESS_SCOPE]
    assert hub["config"]["KubeSpawner"]["server_token_scopes"] == [
        "users:activity!user",
        "access:servers!server",
        hub_service.ACCESS_SCOPE,
    ]


def test_sized_for_a_class_of_300_on_gpu_nodes():
    values = _values()
    assert values["hub"]["concurrentSpawnLimit"] >= 300
    # The pre-puller reaches the nodes the GPU profiles run on: it tolerates their taint.
    assert GPU_TAINT in values["prePuller"]["extraTolerations"]
    for profile in values["singleuser"]["profileList"]:
        for toleration in profile.get("kubespawner_override", {}).get("tolerations", []):
            assert toleration in values["prePuller"]["extraTolerations"], profile["display_name"]
    # The pull at start is bounded, and well inside the start timeout.
    assert 0 < hook_limit() <= values["singleuser"]["startTimeout"] // 4
    assert values["singleuser"]["startTimeout"] >= 300
    # TLS and the pull secret are there to fill in.
    assert values["proxy"]["https"]["enabled"] and values["proxy"]["https"]["hosts"]
    assert values["singleuser"]["image"]["pullSecrets"]


class _Group:
    def __init__(self, name: str) -> None:
        self.name = name


class _Spawner:
    def __init__(self, *groups: str) -> None:
        self.user = type("User", (), {"groups": [_Group(g) for g in groups]})()


def test_a_whole_gpu_is_offered_only_to_the_named_group():
    from traitlets.config import Config

    values = _values()
    c = Config()
    c.KubeSpawner.profile_list = values["singleuser"]["profileList"]  # as the chart sets it
    exec(values["hub"]["extraConfig"]["hopper-whole-gpu"], {"c": c})  # as the hub runs extraConfig
    profiles_for = c.KubeSpawner.profile_list
    whole = [
        p["display_name"]
        for p in values["singleuser"]["profileList"]
        if "nvidia.com/gpu" in p.get("kubespawner_override", {}).get("extra_resource_limits", {})
    ]
    assert whole == ["A whole H100 or H200"]
    everyone = [p["display_name"] for p in profiles_for(_Spawner("learners"))]
    assert whole[0] not in everyone and len(everyone) == len(values["singleuser"]["profileList"]) - 1
    assert whole[0] in [p["display_name"] for p in profiles_for(_Spawner("learners", "whole-gpu"))]
