"""Starting alias tables for organisations and venues; editors extend them in the admin."""

from django.db import migrations

ORGANIZATIONS = {
    # slug: (label, name, name_zh, [patterns found in affiliations])
    "microsoft": ("Microsoft", "Microsoft", "微软", ["Microsoft", "Microsoft Research", "MSR"]),
    "google": ("Google", "Google", "谷歌", ["Google", "Google Research", "Google DeepMind",
                                           "DeepMind"]),
    "meta": ("Meta", "Meta", "Meta", ["Meta", "Meta AI", "FAIR", "Facebook AI Research"]),
    "nvidia": ("NVIDIA", "NVIDIA", "英伟达", ["NVIDIA", "Nvidia Research"]),
    "bytedance": ("ByteDance", "ByteDance", "字节跳动", ["ByteDance", "ByteDance Seed",
                                                      "Volcano Engine", "TikTok"]),
    "alibaba": ("Alibaba", "Alibaba", "阿里巴巴", ["Alibaba", "Alibaba Group", "Alibaba Cloud",
                                               "DAMO Academy", "Ant Group"]),
    "paypal": ("PayPal", "PayPal", "PayPal", ["PayPal"]),
    "amazon": ("Amazon", "Amazon", "亚马逊", ["Amazon", "AWS", "Amazon Web Services"]),
    "peking-university": ("PKU", "Peking University", "北京大学", ["Peking University"]),
    "sjtu": ("SJTU", "Shanghai Jiao Tong University", "上海交通大学",
             ["Shanghai Jiao Tong University", "SJTU"]),
    "tsinghua": ("Tsinghua", "Tsinghua University", "清华大学", ["Tsinghua University"]),
}

VENUES = {
    # short name: (full name, [aliases])
    "NSDI": ("USENIX Symposium on Networked Systems Design and Implementation",
             ["NSDI", "Networked Systems Design and Implementation"]),
    "OSDI": ("USENIX Symposium on Operating Systems Design and Implementation",
             ["OSDI", "Operating Systems Design and Implementation"]),
    "SOSP": ("ACM Symposium on Operating Systems Principles",
             ["SOSP", "Symposium on Operating Systems Principles"]),
    "EuroSys": ("European Conference on Computer Systems", ["EuroSys"]),
    "ASPLOS": ("Architectural Support for Programming Languages and Operating Systems",
               ["ASPLOS"]),
    "ATC": ("USENIX Annual Technical Conference", ["USENIX ATC", "ATC"]),
    "SIGCOMM": ("ACM SIGCOMM", ["SIGCOMM"]),
    "MLSys": ("Conference on Machine Learning and Systems", ["MLSys"]),
    "FAST": ("USENIX Conference on File and Storage Technologies", ["FAST"]),
    "VLDB": ("Very Large Data Bases", ["VLDB", "PVLDB"]),
    "SIGMOD": ("ACM SIGMOD", ["SIGMOD"]),
    "ISCA": ("International Symposium on Computer Architecture", ["ISCA"]),
    "MICRO": ("IEEE/ACM International Symposium on Microarchitecture", ["MICRO"]),
    "SC": ("International Conference for High Performance Computing", ["SC"]),
    "ICML": ("International Conference on Machine Learning", ["ICML"]),
    "NeurIPS": ("Conference on Neural Information Processing Systems", ["NeurIPS", "NIPS"]),
    "ICLR": ("International Conference on Learning Representations", ["ICLR"]),
}


def add(apps, schema_editor):
    Organization = apps.get_model("papers", "Organization")
    OrganizationAlias = apps.get_model("papers", "OrganizationAlias")
    VenueAlias = apps.get_model("papers", "VenueAlias")
    for slug, (label, name, name_zh, patterns) in ORGANIZATIONS.items():
        org, _ = Organization.objects.get_or_create(
            slug=slug, defaults={"label": label, "name": name, "name_zh": name_zh}
        )
        for pattern in patterns:
            OrganizationAlias.objects.get_or_create(pattern=pattern, defaults={"organization": org})
    for short, (full, aliases) in VENUES.items():
        for alias in aliases:
            VenueAlias.objects.get_or_create(
                alias=alias, defaults={"short_name": short, "full_name": full}
            )


class Migration(migrations.Migration):
    dependencies = [("papers", "0002_ingest")]
    operations = [migrations.RunPython(add, migrations.RunPython.noop)]
