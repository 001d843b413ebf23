#!/usr/bin/env python3
"""s3-server.py - a local S3-compatible server on loopback (moto), with
signature checking on, for the tests and `make cluster-up`.

    scripts/s3-server.py --port 9000 --state-dir DIR [--bucket ireporter]

moto checks AWS Signature V4 only after its first INITIAL_NO_AUTH_ACTION_COUNT
requests; those three are spent here making an IAM user, its policy and
its access key. Everything after (the bucket, every object) must be signed
with that key: a wrong secret gets SignatureDoesNotMatch. When it is ready
it writes DIR/s3.url (`http://KEY:SECRET@127.0.0.1:PORT/BUCKET`, the form of
`s3_url`) and serves until SIGTERM. Objects live in memory: stopping the
server loses them (freeze it with SIGSTOP to play an outage instead).
"""
import argparse
import json
import os
import signal
import sys
import threading
import logging
import urllib.parse

os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"  # read by moto when imported
os.environ.setdefault("MOTO_ALLOW_NONEXISTENT_REGION", "true")

import boto3  # noqa: E402 (moto depends on boto3)
from moto.server import ThreadedMotoServer  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--bucket", default="ireporter")
    args = parser.parse_args()

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=args.port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{args.port}"
    anonymous = dict(endpoint_url=endpoint, region_name="us-east-1",
                     aws_access_key_id="setup", aws_secret_access_key="setup")
    iam = boto3.client("iam", **anonymous)
    iam.create_user(UserName="ireporter")
    iam.put_user_policy(UserName="ireporter", PolicyName="bucket", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
    key = iam.create_access_key(UserName="ireporter")["AccessKey"]
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                      aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
    s3.create_bucket(Bucket=args.bucket)

    quote = lambda text: urllib.parse.quote(text, safe="")  # noqa: E731
    url = f"http://{quote(key['AccessKeyId'])}:{quote(key['SecretAccessKey'])}@127.0.0.1:{args.port}/{args.bucket}"
    os.makedirs(args.state_dir, exist_ok=True)
    path = os.path.join(args.state_dir, "s3.url")
    with open(path + ".tmp", "w") as file:
        file.write(url + "\n")
    os.replace(path + ".tmp", path)
    print(f"s3-server: {endpoint}, bucket {args.bucket}, url in {path}", flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
