//! The TLS of an `https://` collector (issue 23): which certificates Baton
//! trusts, and which it shows, as the OTel exporter variables name them.
//!
//! rustls with ring, through ureq, as Baton's remote workflows are fetched: no
//! second TLS stack, no OpenSSL. Without `OTEL_EXPORTER_OTLP_CERTIFICATE` the
//! collector's certificate is checked against the web's roots that ship with
//! Baton (Mozilla's, as `webpki-roots` bundles them: Honeycomb, Grafana Cloud
//! and Langfuse cloud need nothing more); with it, against that file's
//! certificates instead, as the OpenTelemetry SDKs of Go and Java read it (a
//! private CA or a self-signed collector). A file Baton cannot use is an error
//! here, so that the run exports nothing rather than to a collector it did not
//! mean to trust.

use std::sync::Arc;

use ureq::tls::{Certificate, ClientCert, PemItem, PrivateKey, RootCerts, TlsConfig};

use super::settings::{PemFile, TlsFiles};

/// A TLS file Baton cannot use.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TlsError {
    #[error("{var} `{path}` cannot be read: {source}")]
    Read {
        var: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{var} `{path}` is not PEM ({reason})")]
    NotPem { var: &'static str, path: String, reason: String },
    #[error("{var} `{path}` holds no PEM certificate")]
    NoCertificate { var: &'static str, path: String },
    #[error("{var} `{path}` holds no PEM private key")]
    NoKey { var: &'static str, path: String },
    #[error("{set} is set but {missing} is not: a client certificate needs both")]
    HalfIdentity { set: &'static str, missing: &'static str },
}

/// The TLS configuration the files make.
pub(crate) fn config(files: &TlsFiles) -> Result<TlsConfig, TlsError> {
    let roots = match &files.certificate {
        None => RootCerts::WebPki,
        Some(file) => RootCerts::Specific(Arc::new(certificates(file)?)),
    };
    let identity = match (&files.client_certificate, &files.client_key) {
        (None, None) => None,
        (Some(chain), Some(key)) => Some(ClientCert::new_with_certs(&certificates(chain)?, private_key(key)?)),
        (Some(chain), None) => {
            return Err(TlsError::HalfIdentity { set: chain.var, missing: "OTEL_EXPORTER_OTLP_CLIENT_KEY" });
        }
        (None, Some(key)) => {
            return Err(TlsError::HalfIdentity { set: key.var, missing: "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE" });
        }
    };
    Ok(TlsConfig::builder().root_certs(roots).client_cert(identity).build())
}

/// The same for a gRPC channel (tonic's rustls, ring): the files are checked
/// here as for HTTP, then handed to tonic as they are.
pub(crate) fn grpc_config(
    files: &TlsFiles,
) -> Result<opentelemetry_otlp::tonic_types::transport::ClientTlsConfig, TlsError> {
    use opentelemetry_otlp::tonic_types::transport::{Certificate as GrpcCertificate, ClientTlsConfig, Identity};
    let mut config = ClientTlsConfig::new();
    config = match &files.certificate {
        None => config.with_webpki_roots(),
        Some(file) => {
            certificates(file)?;
            config.ca_certificate(GrpcCertificate::from_pem(read(file)?))
        }
    };
    match (&files.client_certificate, &files.client_key) {
        (None, None) => {}
        (Some(chain), Some(key)) => {
            certificates(chain)?;
            private_key(key)?;
            config = config.identity(Identity::from_pem(read(chain)?, read(key)?));
        }
        (Some(chain), None) => {
            return Err(TlsError::HalfIdentity { set: chain.var, missing: "OTEL_EXPORTER_OTLP_CLIENT_KEY" });
        }
        (None, Some(key)) => {
            return Err(TlsError::HalfIdentity { set: key.var, missing: "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE" });
        }
    }
    Ok(config)
}

fn read(file: &PemFile) -> Result<Vec<u8>, TlsError> {
    std::fs::read(&file.path).map_err(|source| TlsError::Read { var: file.var, path: file.path.clone(), source })
}

/// The PEM items of `file`.
fn pem_items(file: &PemFile) -> Result<Vec<PemItem<'static>>, TlsError> {
    let bytes = read(file)?;
    ureq::tls::parse_pem(&bytes).collect::<Result<Vec<_>, _>>().map_err(|error| TlsError::NotPem {
        var: file.var,
        path: file.path.clone(),
        reason: error.to_string(),
    })
}

/// Every certificate in `file`; at least one.
fn certificates(file: &PemFile) -> Result<Vec<Certificate<'static>>, TlsError> {
    let found: Vec<Certificate<'static>> = pem_items(file)?
        .into_iter()
        .filter_map(|item| match item {
            PemItem::Certificate(certificate) => Some(certificate),
            _ => None,
        })
        .collect();
    if found.is_empty() {
        return Err(TlsError::NoCertificate { var: file.var, path: file.path.clone() });
    }
    Ok(found)
}

/// The first private key in `file`.
fn private_key(file: &PemFile) -> Result<PrivateKey<'static>, TlsError> {
    pem_items(file)?
        .into_iter()
        .find_map(|item| match item {
            PemItem::PrivateKey(key) => Some(key),
            _ => None,
        })
        .ok_or_else(|| TlsError::NoKey { var: file.var, path: file.path.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(var: &'static str, path: &std::path::Path) -> Option<PemFile> {
        Some(PemFile { var, path: path.display().to_string() })
    }

    #[test]
    fn no_files_trust_the_bundled_web_roots() {
        let config = config(&TlsFiles::default()).expect("a config");
        assert!(matches!(config.root_certs(), RootCerts::WebPki));
        assert!(config.client_cert().is_none());
    }

    #[test]
    fn files_baton_cannot_use_are_named() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "not a certificate\n").expect("write");
        let missing = dir.path().join("missing.pem");
        let var = "OTEL_EXPORTER_OTLP_CERTIFICATE";
        let error = |path: &std::path::Path| {
            config(&TlsFiles { certificate: file(var, path), ..TlsFiles::default() }).expect_err("unusable").to_string()
        };
        assert_eq!(error(&text), format!("{var} `{}` holds no PEM certificate", text.display()));
        assert!(
            error(&missing).starts_with(&format!("{var} `{}` cannot be read: ", missing.display())),
            "{}",
            error(&missing)
        );
        let broken = dir.path().join("broken.pem");
        std::fs::write(&broken, "-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n").expect("write");
        assert_eq!(
            error(&broken),
            format!("{var} `{}` is not PEM (PEM: Base64Decode(\"InvalidCharacter(33)\"))", broken.display())
        );
        let no_key = TlsFiles {
            client_certificate: file("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &text),
            client_key: file("OTEL_EXPORTER_OTLP_CLIENT_KEY", &text),
            ..TlsFiles::default()
        };
        assert_eq!(
            config(&no_key).expect_err("no certificate").to_string(),
            format!("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE `{}` holds no PEM certificate", text.display())
        );
        let half = TlsFiles {
            client_certificate: file("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &text),
            ..TlsFiles::default()
        };
        assert_eq!(
            config(&half).expect_err("half an identity").to_string(),
            "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is set but OTEL_EXPORTER_OTLP_CLIENT_KEY is not: a client \
             certificate needs both"
        );
    }
}
