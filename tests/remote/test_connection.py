"""Connecting as the mysql clients do, checked on the real MariaDB: TLS by --ssl-mode with a CA and a
server certificate made here, MariaDB's ed25519 authentication, and a dump over each."""
from __future__ import annotations

import datetime
import ipaddress
import sys
from pathlib import Path

import pytest

from remote_server import (REPL_PASSWORD, add_user, available, connect_options, dumped_logs, replication_server,
                           server_logs, closed)

from binlog_spec import api
from binlog_spec.errors import AccessDeniedError, ServerUnreachableError

pytestmark = pytest.mark.skipif(not available(), reason="needs Debian's mariadb-server")

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402


def _name(cn: str):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _write_key(key, path: Path) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                       serialization.NoEncryption()))


def make_ca(folder: Path, cn: str):
    """A self-signed CA: (its key, its certificate), the certificate written to folder/cn.pem."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(_name(cn)).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    (folder / f"{cn}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key, cert


def make_server_cert(folder: Path, ca_key, ca_cert) -> tuple[Path, Path]:
    """A server certificate for 127.0.0.1 / localhost signed by the CA: (cert path, key path)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(_name("localhost")).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256()))
    (folder / "server.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_key(key, folder / "server-key.pem")
    return folder / "server.pem", folder / "server-key.pem"


def cipher(conn) -> str:
    rows = conn.query("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
    return rows[0][1] if rows else ""


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tls")
    ca_key, ca_cert = make_ca(folder, "test-ca")
    make_ca(folder, "other-ca")
    cert, key = make_server_cert(folder, ca_key, ca_cert)
    args = [f"--ssl-ca={folder / 'test-ca.pem'}", f"--ssl-cert={cert}", f"--ssl-key={key}"]
    with replication_server(args) as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY); INSERT INTO d.t VALUES (1)")
        add_user(srv, "tlsonly", REPL_PASSWORD)
        srv.sql("ALTER USER 'tlsonly'@'%' REQUIRE SSL")
        yield srv, folder


def test_verify_ca_and_verify_identity_connect_over_tls_and_dump_the_files(tls_server):
    srv, folder = tls_server
    for mode in ("VERIFY_CA", "VERIFY_IDENTITY"):
        with api.connect(connect_options(srv, ssl_mode=mode, ssl_ca=str(folder / "test-ca.pem"))) as conn:
            assert cipher(conn)
            name = conn.binary_logs()[-1][0]
            events = list(api.dump_events(conn, name, 4, blocking=False))
        assert dumped_logs(events)[name] == closed(server_logs(srv)[name])


def test_a_certificate_of_another_ca_is_refused_in_one_line(tls_server):
    srv, folder = tls_server
    with pytest.raises(ServerUnreachableError) as caught:
        api.connect(connect_options(srv, ssl_mode="VERIFY_CA", ssl_ca=str(folder / "other-ca.pem")))
    text = str(caught.value)
    assert "\n" not in text and "certificate verify failed" in text and REPL_PASSWORD not in text


def test_required_encrypts_without_verifying_and_disabled_does_not(tls_server):
    srv, _folder = tls_server
    with api.connect(connect_options(srv, ssl_mode="REQUIRED")) as conn:
        assert cipher(conn)
    with api.connect(connect_options(srv, ssl_mode="DISABLED")) as conn:
        assert cipher(conn) == ""
    with api.connect(connect_options(srv)) as conn:            # PREFERRED: TLS since the server offers it
        assert cipher(conn)
    with pytest.raises(AccessDeniedError):                      # a user the server lets in over TLS only
        api.connect(connect_options(srv, user="tlsonly", ssl_mode="DISABLED"))
    with api.connect(connect_options(srv, user="tlsonly", ssl_mode="REQUIRED")) as conn:
        assert cipher(conn)


def test_required_against_a_server_without_tls_is_refused():
    with replication_server() as srv:
        with pytest.raises(ServerUnreachableError) as caught:
            api.connect(connect_options(srv, ssl_mode="REQUIRED"))
        assert "\n" not in str(caught.value) and f"127.0.0.1:{srv.port}" in str(caught.value)
        with api.connect(connect_options(srv)) as conn:          # PREFERRED falls back to plain TCP
            assert cipher(conn) == ""


def test_mariadb_ed25519_authentication_reads_the_logs(monkeypatch):
    pytest.importorskip("nacl")
    with replication_server() as srv:
        srv.sql("INSTALL SONAME 'auth_ed25519'")
        add_user(srv, "ed", "ed-Secret-7", plugin="ed25519")
        assert srv.sql("SELECT plugin FROM mysql.user WHERE user = 'ed'").strip() == "ed25519"
        with api.connect(connect_options(srv, user="ed", password="ed-Secret-7", ssl_mode="DISABLED")) as conn:
            name = conn.binary_logs()[-1][0]
            events = list(api.dump_events(conn, name, 4, blocking=False))
        assert dumped_logs(events)[name] == closed(server_logs(srv)[name])
        with pytest.raises(AccessDeniedError) as caught:
            api.connect(connect_options(srv, user="ed", password="wrong", ssl_mode="DISABLED"))
        assert "wrong" not in str(caught.value)
        # Without PyNaCl (the `remote` extra), one line says what to install.
        monkeypatch.setitem(sys.modules, "nacl", None)
        monkeypatch.setitem(sys.modules, "nacl.bindings", None)
        import pymysql._auth
        monkeypatch.setattr(pymysql._auth, "_nacl_bindings", False)     # (PyMySQL keeps what it imported)
        with pytest.raises(AccessDeniedError) as caught:
            api.connect(connect_options(srv, user="ed", password="ed-Secret-7", ssl_mode="DISABLED"))
        assert "needs PyNaCl" in str(caught.value) and "binlog-spec[remote]" in str(caught.value)


def test_the_user_and_password_of_an_option_file_or_mysql_pwd_reach_the_server(tmp_path, monkeypatch):
    from binlog_spec.cli.remote_arguments import connect_options as cli_options
    from test_remote_arguments import parse
    monkeypatch.setenv("HOME", str(tmp_path))
    with replication_server() as srv:
        cnf = tmp_path / "client.cnf"
        cnf.write_text(f"[client]\nhost = 127.0.0.1\nport = {srv.port}\nuser = repl\npassword = {REPL_PASSWORD}\n")
        with api.connect(cli_options(parse(["-R", "--defaults-file", str(cnf)]))) as conn:
            assert conn.binary_logs()
        monkeypatch.setenv("MYSQL_PWD", REPL_PASSWORD)
        opts = cli_options(parse(["-R", "--host", "127.0.0.1", "-P", str(srv.port), "-u", "repl"]))
        with api.connect(opts) as conn:
            assert conn.binary_logs()
        monkeypatch.setenv("MYSQL_PWD", "wrong")
        with pytest.raises(AccessDeniedError):
            api.connect(cli_options(parse(["-R", "--host", "127.0.0.1", "-P", str(srv.port), "-u", "repl"])))


def test_a_unix_socket_is_used_instead_of_host_and_port_and_names_the_server():
    from binlog_spec.options import ConnectOptions
    with replication_server() as srv:
        opts = ConnectOptions(socket=str(srv.socket), host="ignored.invalid", port=1, user="repl",
                              password=REPL_PASSWORD)
        with api.connect(opts) as conn:
            assert conn.server == str(srv.socket) and conn.binary_logs()
        with pytest.raises(AccessDeniedError) as caught:
            api.connect(ConnectOptions(socket=str(srv.socket), user="repl", password="nope"))
        assert str(caught.value).startswith(f"{srv.socket}: ")
        missing = str(srv.tmp / "no.sock")
        with pytest.raises(ServerUnreachableError) as caught:
            api.connect(ConnectOptions(socket=missing, user="repl"))
        assert str(caught.value).startswith(f"{missing}: cannot connect")
