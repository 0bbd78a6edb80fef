"""What a container runs, from its image's config and its pod spec (sandbox/process.py):
Kubernetes' command/args rules, the image's user by id or by name, and the environment."""
import os
import sys

import pytest

from support.processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from sandbox.process import ImageConfigError, groups_of, image_env, process_of, user_of  # noqa: E402

ENGINE = {"User": "10001:10001", "Env": ["PATH=/usr/local/bin:/usr/bin", "PYTHONUNBUFFERED=1"],
          "Entrypoint": ["segflow"], "Cmd": ["--help"], "WorkingDir": "/app"}
PASSWD = "root:x:0:0:root:/root:/bin/bash\nsegflow:x:10001:10001::/home/segflow:/bin/sh\napp:x:500:600::/srv:/bin/sh\n"
GROUP = "root:x:0:\nsegflow:x:10001:\nstaff:x:50:\n"


@pytest.mark.parametrize("container, argv", [
    ({}, ["segflow", "--help"]),                                          # entrypoint + cmd
    ({"args": ["run", "x.py"]}, ["segflow", "run", "x.py"]),             # args replace cmd
    ({"command": ["python3"]}, ["python3"]),                             # command drops entrypoint and cmd
    ({"command": ["sh", "-c"], "args": ["echo $(NAME) $$(NAME)"]}, ["sh", "-c", "echo pod $(NAME)"]),
])
def test_command_and_args_follow_kubernetes(container, argv):
    assert process_of(ENGINE, container, {"NAME": "pod"}, PASSWD, GROUP).argv == argv


def test_an_image_and_a_spec_that_name_nothing_to_run_are_refused():
    with pytest.raises(ImageConfigError, match="neither the container spec nor the image 'bare'"):
        process_of({}, {"name": "main", "image": "bare"}, {})


def test_the_pods_variables_override_the_images_and_home_comes_from_passwd():
    process = process_of(ENGINE, {}, {"PYTHONUNBUFFERED": "0", "ROLE": "worker"}, PASSWD, GROUP)
    assert process.env == {"PATH": "/usr/local/bin:/usr/bin", "PYTHONUNBUFFERED": "0", "ROLE": "worker",
                           "HOME": "/home/segflow"}
    assert process_of(ENGINE, {}, {"HOME": "/data"}, PASSWD, GROUP).env["HOME"] == "/data"


def test_an_image_without_env_gets_dockers_default_path():
    assert image_env({}) == {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}


@pytest.mark.parametrize("user, ids", [
    ("10001:10001", (10001, 10001)), ("10001", (10001, 10001)), ("app", (500, 600)), ("app:staff", (500, 50)),
    ("4242", (4242, 0)), ("", (0, 0))])
def test_the_images_user_by_id_or_name(user, ids):
    assert user_of({"User": user}, {}, PASSWD, GROUP) == ids


def test_the_security_context_overrides_the_images_user():
    assert user_of(ENGINE, {"runAsUser": 2000}, PASSWD, GROUP) == (2000, 0)
    assert user_of(ENGINE, {"runAsUser": 2000, "runAsGroup": 3000}, PASSWD, GROUP) == (2000, 3000)
    process = process_of(ENGINE, {"securityContext": {"runAsUser": 7}}, {}, PASSWD, GROUP,
                         pod_security={"runAsUser": 8, "runAsGroup": 9})
    assert (process.uid, process.gid) == (7, 9)


def test_a_user_name_missing_from_the_image_is_an_error_that_says_what_to_do():
    with pytest.raises(ImageConfigError, match="user 'nobody' is not in the image's /etc/passwd: give a numeric user"):
        user_of({"User": "nobody"}, {}, PASSWD, GROUP)
    with pytest.raises(ImageConfigError, match="group 'wheel' is not in the image's /etc/group"):
        user_of({"User": "app:wheel"}, {}, PASSWD, GROUP)


def test_the_working_directory_is_the_specs_else_the_images_else_root():
    assert process_of(ENGINE, {}, {}, PASSWD, GROUP).cwd == "/app"
    assert process_of(ENGINE, {"workingDir": "/data"}, {}, PASSWD, GROUP).cwd == "/data"
    assert process_of({"Cmd": ["sh"]}, {}, {}).cwd == "/"


def test_supplementary_groups_are_the_images_then_the_pods():
    """The user's groups in the image's /etc/group, the pod's supplementalGroups and its
    fsGroup (the group its volumes are given to); the primary group is not repeated."""
    passwd = "root:x:0:0::/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\n"
    group = "root:x:0:\napp:x:1000:\nstaff:x:50:app,other\nwheel:x:10:other\n"
    assert groups_of(1000, 1000, {"supplementalGroups": [7, 50], "fsGroup": 4242}, passwd, group) == (50, 7, 4242)
    assert groups_of(1000, 1000, {"fsGroup": 1000}, passwd, group) == (50,)
    assert groups_of(2000, 2000, {}, passwd, group) == ()
    process = process_of({"Entrypoint": ["x"], "User": "app"}, {}, {}, passwd, group, {"fsGroup": 4242})
    assert (process.uid, process.gid, process.groups) == (1000, 1000, (50, 4242))
