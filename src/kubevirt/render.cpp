#include "kubevirt/render.hpp"

#include "catalog/catalog.hpp"
#include "guest/cloud_init.hpp"
#include "kubevirt/base64.hpp"
#include "kubevirt/names.hpp"
#include "plan/plan.hpp"
#include "spec/boot_disk.hpp"
#include "spec/quantity.hpp"
#include "spec/validators.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"

namespace bowline::kubevirt {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kInstance = "app.kubernetes.io/instance";
constexpr const char* kPodNetwork = "default";
constexpr const char* kSystemDisk = "system";
constexpr const char* kCloudInitDisk = "cloudinitdisk";
constexpr const char* kDiskPrefix = "disk-";

std::string join(const std::vector<std::string>& lines, const std::string& separator) {
  std::string out;
  for (const auto& line : lines) out += (out.empty() ? "" : separator) + line;
  return out;
}

// What the render is building, and what went wrong on the way.
class Renderer {
 public:
  Renderer(const spec::Spec& spec, const RenderOptions& options) : s_(spec), o_(options) {}

  Manifests run() {
    check_names();
    check_sizing();
    if (!problems_.empty()) throw RenderError(problems_);
    uuid_ = plan::uuid_from_seed(o_.ns, s_.name, s_.cloud_init_seed.value_or(""));
    needs_cloud_init_ = s_.cloud_init.has_value() || !s_.ssh_keys.empty() || s_.netplan_dhcp ||
                        o_.always_cloud_init;

    Manifests out;
    // Without an image the VM boots from disks[0] (Cozystack's form): no system DataVolume.
    const bool system_disk = !spec::boots_from_disk(s_);
    auto data_volume = system_disk ? system_data_volume() : Json();
    auto secret = needs_cloud_init_ ? cloud_init_secret() : Json();
    auto vm = virtual_machine();
    auto service = access_service();
    if (!problems_.empty()) throw RenderError(problems_);
    if (system_disk) out.objects.push_back(std::move(data_volume));
    if (needs_cloud_init_) out.objects.push_back(std::move(secret));
    out.objects.push_back(std::move(vm));
    out.objects.push_back(std::move(service));
    note_what_does_not_apply();
    out.notes = std::move(notes_);
    return out;
  }

 private:
  void problem(std::string text) { problems_.push_back(std::move(text)); }

  void check_names() {
    if (auto p = check_dns1123_label(o_.ns); !p.empty()) problem("namespace: " + p);
    if (!is_label_value(o_.space_id))
      problem("space.id: \"" + o_.space_id + "\" cannot label the objects (" + kSpaceIdLabel +
              "): up to 63 letters, digits, '-', '_' and '.', starting and ending with a letter "
              "or digit");
    if (auto p = check_subdomain(s_.name); !p.empty()) {
      problem("name: " + p + " (libvirt accepts it; Kubernetes does not)");
    } else if (auto q = check_dns1035_label(s_.name); !q.empty()) {
      problem("name: " + q + " (the VM's Service shares its name, and a Service name is at most " +
              "63 lowercase letters, digits and '-', starting with a letter)");
    }
    for (std::size_t i = 0; i < s_.disks.size(); ++i) {
      const auto& name = s_.disks[i].name;
      const auto where = "disks[" + std::to_string(i) + "].name: ";
      if (auto p = check_dns1123_label(kDiskPrefix + name); !p.empty())
        problem(where + "the VM's disk " + p);
      if (auto p = check_subdomain(o_.data_volume_prefix + name); !p.empty())
        problem(where + "the DataVolume " + p);
    }
    for (std::size_t i = 0; i < s_.networks.size(); ++i) {
      if (s_.networks[i] == kPodNetwork)
        problem("networks[" + std::to_string(i) +
                "].name: \"default\" is the pod network's name in the VM; rename the attachment");
      else if (auto p = check_dns1123_label(s_.networks[i]); !p.empty())
        problem("networks[" + std::to_string(i) + "].name: " + p);
    }
    for (std::size_t i = 0; i < s_.gpus.size(); ++i) {
      const auto& gpu = s_.gpus[i];
      const auto slash = gpu.find('/');
      spec::Device device;
      if (spec::parse_device(gpu, device).empty())
        problem("gpus[" + std::to_string(i) + "].name: \"" + gpu +
                "\" is a host device address, which only libvirt understands; KubeVirt needs the "
                "device plugin's resource name (e.g. nvidia.com/GA102GL_A10)");
      else if (slash == std::string::npos || slash == 0 || slash + 1 == gpu.size())
        problem("gpus[" + std::to_string(i) + "].name: \"" + gpu +
                "\" is not a resource name of the form vendor/device (e.g. "
                "nvidia.com/GA102GL_A10)");
    }
  }

  // The spec's loader enforces these; a Spec built by other means must not slip past them.
  void check_sizing() {
    const auto& r = s_.resources;
    if ((r.cpu && *r.cpu == 0) || (r.sockets && *r.sockets == 0))
      problem("resources: cpu and sockets are whole numbers from 1 to 4294967295");
    if (r.memory_bytes && *r.memory_bytes < 1000000) problem("resources.memory: below 1M");
    if (s_.instance_type && !r.empty() && !r.sizes_vm())
      problem("resources: instanceType \"" + *s_.instance_type +
              "\" cannot be combined with resources that size the VM only in part");
    if (s_.instance_type && !catalog::find_instance_type(*s_.instance_type))
      problem("instanceType: unknown instance type \"" + *s_.instance_type + "\"");
    if (s_.instance_profile && !catalog::find_preference(*s_.instance_profile))
      problem("instanceProfile: unknown preference \"" + *s_.instance_profile + "\"");
  }

  // What selects the VM's pod (the template's and the Service's selector).
  Json labels() const { return Json{{kManagedByLabel, kManagedByBowline}, {kInstance, s_.name}}; }

  // An object's own labels: also whose it is, which apply and delete check on the cluster.
  Json metadata(const std::string& name) const {
    auto labels = this->labels();
    labels[kSpaceIdLabel] = space_label_value(o_.space_id, o_.ns, s_.name);
    return Json{{"name", name}, {"namespace", o_.ns}, {"labels", labels}};
  }

  // ---- DataVolume ----------------------------------------------------------------------
  Json system_data_volume() {
    Json source;
    bool size_needed = true;
    switch (s_.image.kind) {
      case spec::ImageKind::Url:
        source = Json{{"http", Json{{"url", s_.image.reference}}}};
        if (spec::is_plain_http_url(s_.image.reference))
          problem("image: CDI would import \"" + s_.image.reference +
                  "\" over plain HTTP without checking imageChecksum, so nothing pins what "
                  "arrives: on KubeVirt give an https:// URL or a library image name");
        else if (s_.image.sha256)
          notes_.push_back("imageChecksum: CDI's http import does not verify checksums");
        break;
      case spec::ImageKind::Library:
        if (auto p = check_subdomain(s_.image.reference); !p.empty())
          problem("image: the library image is cloned from the PVC of the same name in namespace " +
                  o_.image_namespace + ", and " + p);
        source =
            Json{{"pvc", Json{{"namespace", o_.image_namespace}, {"name", s_.image.reference}}}};
        size_needed = false;  // CDI sizes a clone like its source
        break;
      case spec::ImageKind::Path:
        problem("image: \"" + s_.image.reference +
                "\" is a path on a libvirt host, which a cluster cannot import: give an "
                "https:// URL or a library image name");
        break;
    }
    Json storage = Json::object();
    std::string size;
    if (s_.disk_bytes) {
      size = spec::format_binary_size(*s_.disk_bytes);
    } else if (size_needed) {
      size = o_.default_disk_size;
      notes_.push_back("disk: not set; the system disk is imported at " + size +
                       " (CDI needs a size for a URL import)");
    }
    if (!size.empty()) storage["resources"] = Json{{"requests", Json{{"storage", size}}}};
    if (!o_.storage_class.empty()) storage["storageClassName"] = o_.storage_class;

    Json dv;
    dv["apiVersion"] = "cdi.kubevirt.io/v1beta1";
    dv["kind"] = "DataVolume";
    dv["metadata"] = metadata(system_disk_name(s_.name));
    // CDI may garbage-collect a finished DataVolume; the VM refers to it by name.
    dv["metadata"]["annotations"] =
        Json{{"cdi.kubevirt.io/storage.deleteAfterCompletion", "false"}};
    dv["spec"] = Json{{"source", source}, {"storage", storage}};
    return dv;
  }

  // ---- Secret --------------------------------------------------------------------------
  // The user-data: guest/ renders the same documents a libvirt space gets.
  std::string user_data() {
    if (!s_.cloud_init && !s_.ssh_keys.empty() && !o_.always_cloud_init)
      return guest::render_keys_only_user_data(s_.ssh_keys);
    if (o_.owner.username.empty()) {
      problem(
          "the owner's username is needed: cloudInit and netplanDhcp bring bowline's "
          "user-data, which creates the owner's account (e.g. --var user.username=alice)");
      return {};
    }
    try {
      return guest::render_user_data(guest_plan());
    } catch (const std::exception& e) {
      problem(std::string("cloud-init: ") + e.what());
      return {};
    }
  }

  // What cloud-init makes of the guest: on the pod network, so no static address.
  plan::GuestPlan guest_plan() const {
    auto guest = plan::make_guest_plan(
        s_, o_.owner, o_.space_id.empty() ? o_.ns + "/" + s_.name : o_.space_id, std::nullopt);
    guest.host_key = o_.host_key;
    if (!o_.instance_id.empty()) guest.instance_id = o_.instance_id;
    plan::add_terminal_key(guest, o_.terminal_key_public);
    return guest;
  }

  // DHCP on every en*/eth* interface, keeping the search domains DHCP offers.
  std::string network_data() {
    try {
      return guest::render_network_config(guest_plan()).value_or("");
    } catch (const std::exception& e) {
      problem(std::string("cloud-init network-data: ") + e.what());
      return {};
    }
  }

  Json cloud_init_secret() {
    Json data;
    data["userdata"] = base64_encode(user_data());
    if (s_.netplan_dhcp) data["networkdata"] = base64_encode(network_data());
    Json secret;
    secret["apiVersion"] = "v1";
    secret["kind"] = "Secret";
    secret["metadata"] = metadata(cloud_init_secret_name(s_.name));
    secret["type"] = "Opaque";
    secret["data"] = data;
    return secret;
  }

  // ---- VirtualMachine ------------------------------------------------------------------
  Json cpu() const {
    Json cpu = Json::object();
    if (s_.sizing.source != spec::SizingSource::InstanceType) {
      cpu["cores"] = s_.sizing.cores;
      cpu["sockets"] = s_.sizing.sockets;
    }
    if (s_.cpu_model) cpu["model"] = *s_.cpu_model;
    return cpu;
  }

  std::string memory() const {
    // Resources keep the quantity as written (8Gi stays 8Gi); other sizes are in bytes.
    if (s_.sizing.source == spec::SizingSource::Resources && s_.resources.memory_text)
      return *s_.resources.memory_text;
    return spec::format_binary_size(s_.sizing.memory_bytes);
  }

  Json firmware() const {
    Json fw;
    fw["uuid"] = uuid_;
    if (s_.firmware.bootloader == spec::Bootloader::Uefi)
      fw["bootloader"] = Json{{"efi", Json{{"secureBoot", s_.firmware.secure_boot},
                                           {"persistent", s_.firmware.efi_persistent}}}};
    else if (s_.firmware.bootloader == spec::Bootloader::Bios)
      fw["bootloader"] = Json{{"bios", Json::object()}};
    return fw;
  }

  Json devices() const {
    Json disks = Json::array();
    const std::size_t first = spec::boots_from_disk(s_) ? 1 : 2;  // disks[0] boots without an image
    if (!spec::boots_from_disk(s_))
      disks.push_back(Json{{"name", kSystemDisk}, {"disk", Json::object()}, {"bootOrder", 1}});
    for (std::size_t i = 0; i < s_.disks.size(); ++i) {
      const auto& d = s_.disks[i];
      Json target = Json::object();
      if (d.bus) target["bus"] = *d.bus;
      disks.push_back(
          Json{{"name", kDiskPrefix + d.name}, {"disk", target}, {"bootOrder", i + first}});
    }
    if (needs_cloud_init_)
      disks.push_back(Json{{"name", kCloudInitDisk}, {"disk", Json::object()}});

    const char* binding = o_.pod_binding == PodBinding::Bridge ? "bridge" : "masquerade";
    Json interfaces = Json::array();
    interfaces.push_back(Json{{"name", kPodNetwork}, {binding, Json::object()}});
    for (const auto& n : s_.networks)
      interfaces.push_back(Json{{"name", n}, {"bridge", Json::object()}});

    Json devices;
    devices["disks"] = disks;
    devices["interfaces"] = interfaces;
    if (!s_.gpus.empty()) {
      Json gpus = Json::array();
      for (std::size_t i = 0; i < s_.gpus.size(); ++i)
        gpus.push_back(Json{{"name", "gpu" + std::to_string(i + 1)}, {"deviceName", s_.gpus[i]}});
      devices["gpus"] = gpus;
    }
    return devices;
  }

  Json domain() const {
    Json domain;
    if (auto c = cpu(); !c.empty()) domain["cpu"] = c;
    if (s_.sizing.source != spec::SizingSource::InstanceType)
      domain["resources"] = Json{{"requests", Json{{"memory", memory()}}}};
    domain["firmware"] = firmware();
    if (s_.firmware.bootloader == spec::Bootloader::Uefi && s_.firmware.secure_boot)
      domain["features"] = Json{{"smm", Json{{"enabled", true}}}};
    domain["devices"] = devices();
    return domain;
  }

  Json volumes() const {
    Json volumes = Json::array();
    if (!spec::boots_from_disk(s_))
      volumes.push_back(
          Json{{"name", kSystemDisk}, {"dataVolume", Json{{"name", system_disk_name(s_.name)}}}});
    for (const auto& d : s_.disks)
      volumes.push_back(Json{{"name", kDiskPrefix + d.name},
                             {"dataVolume", Json{{"name", o_.data_volume_prefix + d.name}}}});
    if (needs_cloud_init_) {
      const Json ref{{"name", cloud_init_secret_name(s_.name)}};
      Json source{{"secretRef", ref}};
      if (s_.netplan_dhcp) source["networkDataSecretRef"] = ref;
      volumes.push_back(Json{{"name", kCloudInitDisk}, {"cloudInitNoCloud", source}});
    }
    return volumes;
  }

  Json networks() const {
    Json networks = Json::array();
    networks.push_back(Json{{"name", kPodNetwork}, {"pod", Json::object()}});
    for (const auto& n : s_.networks)
      networks.push_back(Json{{"name", n}, {"multus", Json{{"networkName", o_.ns + "/" + n}}}});
    return networks;
  }

  Json virtual_machine() const {
    Json vm;
    vm["apiVersion"] = "kubevirt.io/v1";
    vm["kind"] = "VirtualMachine";
    vm["metadata"] = metadata(s_.name);
    Json annotations = Json::object();
    if (!o_.owner.username.empty()) annotations["bowline/owner"] = o_.owner.username;
    if (!o_.space_name.empty()) annotations["bowline/space"] = o_.space_name;
    if (!annotations.empty()) vm["metadata"]["annotations"] = annotations;

    Json spec;
    spec["runStrategy"] = spec::to_string(s_.run_strategy);
    if (s_.sizing.source == spec::SizingSource::InstanceType && s_.instance_type)
      spec["instancetype"] =
          Json{{"kind", "VirtualMachineClusterInstancetype"}, {"name", *s_.instance_type}};
    if (s_.instance_profile)
      spec["preference"] =
          Json{{"kind", "VirtualMachineClusterPreference"}, {"name", *s_.instance_profile}};

    Json template_metadata{{"labels", labels()}};
    if (o_.pod_binding == PodBinding::Bridge)
      template_metadata["annotations"] =
          Json{{"kubevirt.io/allow-pod-bridge-network-live-migration", "true"}};
    Json vmi;
    vmi["hostname"] = util::to_lower(util::split(s_.hostname, '.').front());
    if (!s_.external) vmi["subdomain"] = s_.name;  // <hostname>.<name>.<ns>.svc via the Service
    vmi["domain"] = domain();
    vmi["networks"] = networks();
    vmi["volumes"] = volumes();
    spec["template"] = Json{{"metadata", template_metadata}, {"spec", vmi}};
    vm["spec"] = spec;
    return vm;
  }

  // ---- Service -------------------------------------------------------------------------
  Json access_service() {
    Json svc;
    svc["apiVersion"] = "v1";
    svc["kind"] = "Service";
    svc["metadata"] = metadata(s_.name);
    Json spec;
    if (!s_.external) {
      // Headless: a DNS name for the VM's pod address, nothing published.
      spec["type"] = "ClusterIP";
      spec["clusterIP"] = "None";
      spec["selector"] = labels();
      svc["spec"] = spec;
      return svc;
    }
    const bool whole_ip = s_.external_method == spec::ExternalMethod::WholeIP;
    Json annotations{{"networking.cozystack.io/wholeIP", whole_ip ? "true" : "false"}};
    if (!whole_ip)
      annotations["networking.cozystack.io/allowICMP"] = s_.external_allow_icmp ? "true" : "false";
    svc["metadata"]["annotations"] = annotations;
    if (whole_ip)  // cozy-proxy forwards the whole address; kube-proxy must leave it alone
      svc["metadata"]["labels"]["service.kubernetes.io/service-proxy-name"] = "cozy-proxy";
    spec["type"] = "LoadBalancer";
    spec["externalTrafficPolicy"] = "Local";
    spec["selector"] = labels();
    Json ports = Json::array();
    for (auto port : s_.external_ports)
      ports.push_back(Json{{"name", "port-" + std::to_string(port)},
                           {"protocol", "TCP"},
                           {"port", port},
                           {"targetPort", port}});
    if (ports.empty()) {
      if (!whole_ip)
        problem(
            "externalPorts: empty, so the PortList LoadBalancer would publish nothing; list "
            "ports or use externalMethod: WholeIP");
      // A LoadBalancer needs one port; with WholeIP it only anchors the address.
      ports.push_back(
          Json{{"name", "whole-ip"}, {"protocol", "TCP"}, {"port", 65535}, {"targetPort", 65535}});
    }
    spec["ports"] = ports;
    svc["spec"] = spec;
    return svc;
  }

  void note_what_does_not_apply() {
    if (s_.network.mode == spec::NetworkMode::Bridged && s_.network.cidr)
      notes_.push_back("network: the bridged address range " + s_.network.cidr->to_string() +
                       " is a libvirt host setting; on KubeVirt the VM takes the pod network's "
                       "address");
    else if (s_.network.mode == spec::NetworkMode::Nat && s_.network.bridge != "default")
      notes_.push_back("network: libvirt network " + s_.network.bridge +
                       " does not apply; on KubeVirt the VM is on the pod network");
    if (!s_.devices.empty())
      notes_.push_back(
          "devices: host device passthrough is libvirt-only and is not rendered; use "
          "gpus with a device plugin's resource name");
    if (s_.sizing.source == spec::SizingSource::Resources && s_.instance_type)
      notes_.push_back("instanceType " + *s_.instance_type + " is dropped: resources size the VM");
    if (!needs_cloud_init_ && (!s_.environment.empty() || !o_.owner.username.empty()))
      notes_.push_back(
          "no cloud-init disk (no cloudInit, sshKeys or netplanDhcp): the owner's "
          "account and the environment are not set up in the guest");
  }

  const spec::Spec& s_;
  const RenderOptions& o_;
  std::string uuid_;
  bool needs_cloud_init_ = false;
  std::vector<std::string> problems_;
  std::vector<std::string> notes_;
};

}  // namespace

RenderError::RenderError(const std::vector<std::string>& problems)
    : std::runtime_error(join(problems, "\n")), problems_(problems) {}

std::string system_disk_name(const std::string& vm_name) {
  return vm_name + "-system";
}

std::string cloud_init_secret_name(const std::string& vm_name) {
  return vm_name + "-cloud-init";
}

std::string space_label_value(const std::string& space_id, const std::string& ns,
                              const std::string& vm_name) {
  if (!space_id.empty()) return space_id;
  return util::sha256_hex(ns + "/" + vm_name).substr(0, 16);
}

Json ownership_labels(const std::string& space_label) {
  return Json{{kManagedByLabel, kManagedByBowline}, {kSpaceIdLabel, space_label}};
}

Manifests render_manifests(const spec::Spec& spec, const RenderOptions& options) {
  return Renderer(spec, options).run();
}

}  // namespace bowline::kubevirt
