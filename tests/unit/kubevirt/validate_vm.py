#!/usr/bin/env python3
"""Validates a rendered manifest (JSON file) against KubeVirt's VirtualMachine schema.

Usage: validate_vm.py SCHEMA vm|datavolume MANIFEST.json...

Each problem is printed as "MANIFEST: problem"; the exit status is 1 if there is any.
Three passes per manifest:
  1. the upstream schema as it is (draft-04);
  2. the same schema with additionalProperties: false on every object that lists its
     properties, so a misspelt or invented field fails;
  3. our own rules for what the schema leaves to prose: enums, unsigned bounds, one-of
     choices and cross references (disks <-> volumes, interfaces <-> networks).
For a DataVolume, passes 1 and 2 check its spec against v1beta1.DataVolumeSpec (the CDI
definitions the VirtualMachine schema carries for dataVolumeTemplates).
"""
import copy
import json
import re
import sys

import jsonschema

UINT32_MAX = 4294967295
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
QUANTITY = re.compile(
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
RUN_STRATEGIES = {"Always", "Halted", "Manual", "RerunOnFailure", "Once", "WaitAsReceiver"}
INSTANCETYPE_KINDS = {"VirtualMachineInstancetype", "VirtualMachineClusterInstancetype"}
PREFERENCE_KINDS = {"VirtualMachinePreference", "VirtualMachineClusterPreference"}
DISK_BUSES = {"virtio", "sata", "scsi", "usb"}
DISK_TARGETS = ("disk", "cdrom", "lun")
BINDINGS = ("bridge", "masquerade", "sriov", "slirp", "macvtap", "passt", "passtBinding", "binding")
NETWORK_SOURCES = ("pod", "multus", "resourceClaim")
INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def strict(schema):
    """A copy with additionalProperties: false wherever properties are listed."""
    out = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(out)
    return out


def schema_errors(schema, instance, label):
    validator = jsonschema.Draft4Validator(schema)
    return [f"{label}: {'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
            for e in sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))]


def format_bounds(schema, instance, path, errors):
    """integer fields with format int32/int64 must fit (the schema states no bounds)."""
    definitions = schema["definitions"]

    def walk(node_schema, value, where):
        while "$ref" in node_schema:
            node_schema = definitions[node_schema["$ref"].split("/")[-1]]
        if isinstance(value, dict):
            for key, item in value.items():
                sub = node_schema.get("properties", {}).get(key)
                if sub is None and isinstance(node_schema.get("additionalProperties"), dict):
                    sub = node_schema["additionalProperties"]
                if sub is not None:
                    walk(sub, item, f"{where}/{key}")
        elif isinstance(value, list) and "items" in node_schema:
            for i, item in enumerate(value):
                walk(node_schema["items"], item, f"{where}/{i}")
        elif isinstance(value, int) and not isinstance(value, bool):
            bounds = INT_RANGES.get(node_schema.get("format"))
            if bounds and not bounds[0] <= value <= bounds[1]:
                errors.append(f"{where}: {value} is outside {node_schema['format']}")

    walk(schema, instance, path)


def exactly_one(obj, keys):
    return sum(1 for k in keys if k in obj) == 1


def own_rules(vm):
    errors = []
    err = errors.append
    if vm.get("apiVersion") != "kubevirt.io/v1":
        err(f"apiVersion {vm.get('apiVersion')!r} is not kubevirt.io/v1")
    if vm.get("kind") != "VirtualMachine":
        err(f"kind {vm.get('kind')!r} is not VirtualMachine")
    meta = vm.get("metadata", {})
    if not SUBDOMAIN.match(meta.get("name", "")) or len(meta.get("name", "")) > 253:
        err(f"metadata.name {meta.get('name')!r} is not a DNS-1123 subdomain")
    if "namespace" in meta and not DNS_LABEL.match(meta["namespace"]):
        err(f"metadata.namespace {meta['namespace']!r} is not a DNS-1123 label")

    spec = vm.get("spec", {})
    if "running" in spec and "runStrategy" in spec:
        err("spec.running and spec.runStrategy are mutually exclusive")
    if "runStrategy" in spec and spec["runStrategy"] not in RUN_STRATEGIES:
        err(f"spec.runStrategy {spec['runStrategy']!r} is not one of {sorted(RUN_STRATEGIES)}")
    for key, kinds in (("instancetype", INSTANCETYPE_KINDS), ("preference", PREFERENCE_KINDS)):
        if key in spec:
            if not spec[key].get("name"):
                err(f"spec.{key}.name is empty")
            if spec[key].get("kind", next(iter(kinds))) not in kinds:
                err(f"spec.{key}.kind {spec[key].get('kind')!r} is not one of {sorted(kinds)}")

    vmi = spec.get("template", {}).get("spec", {})
    for key in ("hostname", "subdomain"):
        if key in vmi and (not DNS_LABEL.match(vmi[key]) or len(vmi[key]) > 63):
            err(f"template.spec.{key} {vmi[key]!r} is not a DNS-1123 label")
    domain = vmi.get("domain", {})
    cpu = domain.get("cpu", {})
    for key in ("cores", "sockets", "threads", "maxSockets"):
        if key in cpu:
            v = cpu[key]
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= UINT32_MAX:
                err(f"domain.cpu.{key} {v!r} is not an unsigned 32-bit integer")
    memory = domain.get("resources", {}).get("requests", {}).get("memory")
    if memory is not None and not (isinstance(memory, str) and QUANTITY.match(memory)):
        err(f"domain.resources.requests.memory {memory!r} is not a quantity")
    if "instancetype" in spec:
        for key in ("cores", "sockets", "threads"):
            if cpu.get(key):
                err(f"domain.cpu.{key} conflicts with the instancetype matcher")
        if memory is not None:
            err("domain.resources.requests.memory conflicts with the instancetype matcher")
        if "guest" in domain.get("memory", {}):
            err("domain.memory.guest conflicts with the instancetype matcher")

    firmware = domain.get("firmware", {})
    if "uuid" in firmware and not UUID.match(firmware["uuid"]):
        err(f"domain.firmware.uuid {firmware['uuid']!r} is not a lowercase UUID")
    if "bootloader" in firmware:
        loader = firmware["bootloader"]
        if not exactly_one(loader, ("bios", "efi")):
            err("domain.firmware.bootloader needs exactly one of bios, efi")
        if loader.get("efi", {}).get("secureBoot") and \
                not domain.get("features", {}).get("smm", {}).get("enabled"):
            err("efi.secureBoot needs domain.features.smm.enabled")

    devices = domain.get("devices", {})
    disks = devices.get("disks", [])
    volumes = vmi.get("volumes", [])
    disk_names = [d.get("name") for d in disks]
    volume_names = [v.get("name") for v in volumes]
    for names, what in ((disk_names, "disk"), (volume_names, "volume")):
        if len(set(names)) != len(names):
            err(f"{what} names repeat: {names}")
        for n in names:
            if not isinstance(n, str) or not DNS_LABEL.match(n) or len(n) > 63:
                err(f"{what} name {n!r} is not a DNS-1123 label")
    if set(disk_names) != set(volume_names):
        err(f"disks {sorted(disk_names)} and volumes {sorted(volume_names)} do not match")
    boot_orders = []
    for d in disks:
        if not exactly_one(d, DISK_TARGETS):
            err(f"disk {d.get('name')!r} needs exactly one of {DISK_TARGETS}")
        for t in DISK_TARGETS:
            target = d.get(t)
            if target is not None and not isinstance(target, dict):
                err(f"disk {d.get('name')!r}: {t} must be an object, not {target!r}")
            elif target and "bus" in target and target["bus"] not in DISK_BUSES:
                err(f"disk {d.get('name')!r}: bus {target['bus']!r} is not one of {sorted(DISK_BUSES)}")
        if "bootOrder" in d:
            if not isinstance(d["bootOrder"], int) or d["bootOrder"] < 1:
                err(f"disk {d.get('name')!r}: bootOrder must be >= 1")
            boot_orders.append(d["bootOrder"])
    if len(set(boot_orders)) != len(boot_orders):
        err(f"boot orders repeat: {boot_orders}")
    for v in volumes:
        sources = [k for k in v if k != "name"]
        if len(sources) != 1:
            err(f"volume {v.get('name')!r} needs exactly one source, has {sources}")
        nocloud = v.get("cloudInitNoCloud")
        if nocloud is not None:
            if not any(k in nocloud for k in ("userData", "userDataBase64", "secretRef")):
                err(f"volume {v.get('name')!r}: cloudInitNoCloud has no user-data source")

    interfaces = devices.get("interfaces", [])
    networks = vmi.get("networks", [])
    if_names = [i.get("name") for i in interfaces]
    net_names = [n.get("name") for n in networks]
    if set(if_names) != set(net_names) or len(if_names) != len(net_names):
        err(f"interfaces {if_names} and networks {net_names} do not match")
    for i in interfaces:
        if not exactly_one(i, BINDINGS):
            err(f"interface {i.get('name')!r} needs exactly one binding")
    pods = [n for n in networks if "pod" in n]
    if len(pods) > 1:
        err("more than one pod network")
    for n in networks:
        if not exactly_one(n, NETWORK_SOURCES):
            err(f"network {n.get('name')!r} needs exactly one of {NETWORK_SOURCES}")
        if "multus" in n and not n["multus"].get("networkName"):
            err(f"network {n.get('name')!r}: multus.networkName is empty")
    gpu_names = []
    for g in devices.get("gpus", []):
        if not g.get("name") or not g.get("deviceName"):
            err(f"gpu {g!r} needs name and deviceName")
        gpu_names.append(g.get("name"))
    if len(set(gpu_names)) != len(gpu_names):
        err(f"gpu names repeat: {gpu_names}")
    return errors


def datavolume_rules(dv):
    errors = []
    if dv.get("apiVersion") != "cdi.kubevirt.io/v1beta1" or dv.get("kind") != "DataVolume":
        errors.append("not a cdi.kubevirt.io/v1beta1 DataVolume")
    spec = dv.get("spec", {})
    source = spec.get("source", {})
    if len(source) != 1:
        errors.append(f"spec.source needs exactly one kind, has {sorted(source)}")
    size = spec.get("storage", {}).get("resources", {}).get("requests", {}).get("storage")
    if size is not None and not QUANTITY.match(str(size)):
        errors.append(f"storage size {size!r} is not a quantity")
    if "http" in source and size is None:
        errors.append("an http import needs a storage size")
    return errors


def as_datavolume_spec(schema):
    return {"$schema": schema["$schema"], "definitions": schema["definitions"],
            "$ref": "#/definitions/v1beta1.DataVolumeSpec"}


def problems(schema, strict_schema, kind, manifest):
    errors = []
    if kind == "vm":
        errors += schema_errors(schema, manifest, "schema")
        errors += schema_errors(strict_schema, manifest, "strict schema")
        format_bounds(schema, manifest, "", errors)
        errors += own_rules(manifest)
    elif kind == "datavolume":
        errors += schema_errors(as_datavolume_spec(schema), manifest.get("spec"), "schema")
        errors += schema_errors(as_datavolume_spec(strict_schema), manifest.get("spec"),
                                "strict schema")
        errors += datavolume_rules(manifest)
    else:
        sys.exit(f"unknown kind {kind}")
    return errors


def main():
    schema_path, kind, manifest_paths = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(schema_path) as f:
        schema = json.load(f)
    strict_schema = strict(schema)
    failed = False
    for path in manifest_paths:
        with open(path) as f:
            manifest = json.load(f)
        for e in problems(schema, strict_schema, kind, manifest):
            print(f"{path}: {e}")
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
