// SO(3) / SE(3) logarithms and their Jacobians, as Pinocchio defines them (pin.log3, pin.Jlog3,
// pin.log6, pin.Jlog6): twists are [linear; angular], Jlog is the inverse of the right Jacobian,
// so d/dt log(M) = Jlog(M) * (body velocity of M). Closed forms with Taylor series near 0; the
// tests compare every function with Pinocchio's on random and near-singular arguments.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace reljac::lie {

using Matrix3 = Eigen::Matrix3d;
using Vector3 = Eigen::Vector3d;
using Matrix6 = Eigen::Matrix<double, 6, 6>;
using Vector6 = Eigen::Matrix<double, 6, 1>;

constexpr double kSmallAngle = 1e-2;  // below: Taylor series (truncation error < 1e-16)

inline Matrix3 skew(const Vector3& v) {
  Matrix3 S;
  S << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return S;
}

// theta in [0, pi] and w = theta * axis with R = exp([w]x).
inline Vector3 log3(const Matrix3& R, double& theta) {
  const Vector3 a(0.5 * (R(2, 1) - R(1, 2)), 0.5 * (R(0, 2) - R(2, 0)), 0.5 * (R(1, 0) - R(0, 1)));  // sin(theta) axis
  const double c = std::clamp(0.5 * (R.trace() - 1.0), -1.0, 1.0);
  const double s = a.norm();
  theta = std::atan2(s, c);
  if (c > -0.9) {  // away from pi the antisymmetric part gives the axis accurately
    const double s2 = s * s;
    const double factor = theta < kSmallAngle ? 1.0 + s2 / 6.0 + 3.0 * s2 * s2 / 40.0 : theta / s;
    return factor * a;
  }
  // near pi: R ~ 2 k k^T - I + sin(theta) [k]x; the axis from the largest diagonal entry
  const Matrix3 B = 0.5 * (R + R.transpose()) - c * Matrix3::Identity();  // (1 - c) k k^T
  int i = 0;
  B.diagonal().maxCoeff(&i);
  Vector3 k = B.col(i) / std::sqrt(std::max(B(i, i), 1e-300));
  k.normalize();
  if (k.dot(a) < 0) k = -k;
  return theta * k;
}

inline Vector3 log3(const Matrix3& R) {
  double theta;
  return log3(R, theta);
}

// Jlog3 at w = log3(R), theta = |w|.
inline Matrix3 Jlog3(double theta, const Vector3& w) {
  double alpha, diag;
  const double t2 = theta * theta;
  if (theta < kSmallAngle) {
    alpha = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0;
    diag = 1.0 - t2 / 12.0 - t2 * t2 / 720.0;
  } else {
    const double st_1mct = std::sin(theta) / (1.0 - std::cos(theta));
    alpha = 1.0 / t2 - st_1mct / (2.0 * theta);
    diag = 0.5 * theta * st_1mct;
  }
  Matrix3 J = alpha * w * w.transpose();
  J.diagonal().array() += diag;
  J += 0.5 * skew(w);
  return J;
}

inline Matrix3 Jlog3(const Matrix3& R) {
  double theta;
  const Vector3 w = log3(R, theta);
  return Jlog3(theta, w);
}

// beta(theta) = 1/theta^2 - sin/(2 theta (1 - cos)) and beta'(theta) / theta.
inline void betas(double theta, double& beta, double& beta_dot_over_theta) {
  const double t2 = theta * theta;
  if (theta < kSmallAngle) {
    beta = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0;
    beta_dot_over_theta = 1.0 / 360.0 + t2 / 7560.0 + t2 * t2 / 201600.0;
    return;
  }
  const double st = std::sin(theta), ct = std::cos(theta);
  const double inv_2_2ct = 1.0 / (2.0 * (1.0 - ct));
  const double t2inv = 1.0 / t2;
  beta = t2inv - st / theta * inv_2_2ct;
  beta_dot_over_theta = -2.0 * t2inv * t2inv + (1.0 + st / theta) * t2inv * inv_2_2ct;
}

// log6 of M = (R, p): [linear; angular].
inline Vector6 log6(const Matrix3& R, const Vector3& p) {
  double theta;
  const Vector3 w = log3(R, theta);
  double beta, unused;
  betas(theta, beta, unused);
  const double t2 = theta * theta;
  const double alpha = theta < kSmallAngle ? 1.0 - t2 / 12.0 - t2 * t2 / 720.0
                                           : theta * std::sin(theta) / (2.0 * (1.0 - std::cos(theta)));
  Vector6 out;
  out.head<3>() = alpha * p - 0.5 * w.cross(p) + (beta * w.dot(p)) * w;
  out.tail<3>() = w;
  return out;
}

// Jlog6 of M = (R, p).
inline Matrix6 Jlog6(const Matrix3& R, const Vector3& p) {
  double theta;
  const Vector3 w = log3(R, theta);
  const Matrix3 A = Jlog3(theta, w);
  double beta, bdot;
  betas(theta, beta, bdot);
  const double wTp = w.dot(p);
  const Vector3 tmp = (bdot * wTp) * w - (theta * theta * bdot + 2.0 * beta) * p;
  Matrix3 C = tmp * w.transpose() + beta * w * p.transpose();
  C.diagonal().array() += wTp * beta;
  C += skew(0.5 * p);
  Matrix6 J = Matrix6::Zero();
  J.topLeftCorner<3, 3>() = A;
  J.topRightCorner<3, 3>() = C * A;
  J.bottomRightCorner<3, 3>() = A;
  return J;
}

// Ad(M^-1) applied to a twist [v; w] (6): [R^T (v - p x w); R^T w].
inline Vector6 act_inverse(const Matrix3& R, const Vector3& p, const Vector6& twist) {
  Vector6 out;
  out.head<3>() = R.transpose() * (twist.head<3>() - p.cross(twist.tail<3>()));
  out.tail<3>() = R.transpose() * twist.tail<3>();
  return out;
}

}  // namespace reljac::lie
